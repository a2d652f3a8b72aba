// One attempt's answer, written into the client's response as undici delivers it: the status line and headers when
// they arrive, each body chunk as it comes, no stream in between. A client that reads slowly pauses the upstream
// connection (backpressure), and a client that goes away aborts the upstream exchange.
//
// What an attempt means for the instance and the request (success, retry elsewhere, 504...) is decided by the
// proxy through `RelayEvents`; this class only moves bytes.
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { Dispatcher } from 'undici'
import type { ResponseHeaders } from './forwarded-headers.ts'

export interface RelayEvents {
  /**
   * The upstream's final status and headers arrived. Returns the headers for the client, or undefined when the
   * response must not be relayed (the client is gone): the exchange is then aborted and `failed` follows.
   */
  started(statusCode: number, headers: IncomingHttpHeaders): ResponseHeaders | undefined
  /** the client's response head is written: from here on the response belongs to the relay */
  committed(): void
  /** the attempt failed before anything was sent to the client (connection, timeout, abort) */
  failed(error: Error): void
  /** the upstream failed after the client's response had started: it is cut short */
  brokeOff(error: Error): void
}

export class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError'
  readonly code = 'CLIENT_GONE'
  constructor() {
    super('the client closed the connection')
  }
}

export class BadUpstreamAnswerError extends Error {
  override readonly name = 'BadUpstreamAnswerError'
  readonly code = 'BAD_UPSTREAM_ANSWER'
  constructor(cause: unknown) {
    super('the upstream answer cannot be relayed', { cause })
  }
}

export class ResponseRelay implements Dispatcher.DispatchHandler {
  readonly #response: ServerResponse
  readonly #events: RelayEvents
  #controller: Dispatcher.DispatchController | undefined
  #started = false
  #done = false

  constructor(response: ServerResponse, events: RelayEvents) {
    this.#response = response
    this.#events = events
  }

  /** The client's connection closed: an exchange still under way is aborted (its verdict comes through `failed`). */
  clientClosed(): void {
    if (!this.#done && !this.#response.writableFinished) this.#controller?.abort(new ClientGoneError())
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller
    if (this.#response.destroyed) controller.abort(new ClientGoneError())
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    // 1xx informational answers (103 Early Hints...) are not relayed; the final one follows
    if (statusCode < 200) return
    const outgoing = this.#events.started(statusCode, headers)
    if (outgoing === undefined) {
      controller.abort(new ClientGoneError())
      return
    }
    try {
      // (Node's typing narrows a few named headers to strings; numbers are sent as they are)
      this.#response.writeHead(statusCode, outgoing as OutgoingHttpHeaders)
    } catch (error) {
      // a header Node refuses to send (invalid characters): nothing went out, the attempt is a bad answer
      controller.abort(new BadUpstreamAnswerError(error))
      return
    }
    this.#started = true
    this.#events.committed()
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#response.write(chunk)) {
      controller.pause()
      this.#response.once('drain', () => controller.resume())
    }
  }

  onResponseEnd(): void {
    this.#done = true
    this.#response.end()
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#done = true
    if (!this.#started) {
      this.#events.failed(error)
      return
    }
    this.#events.brokeOff(error)
    // the client must see a broken response, never a truncated one that looks complete
    this.#response.destroy()
  }
}
