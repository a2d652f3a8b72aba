// The client's request body on its way upstream, counted: past the limit, or when the client stops sending it, the
// stream fails with an error of its own, so that the proxy can tell a failure the client caused from the instance's.
import type { IncomingMessage } from 'node:http'
import { Transform, type TransformCallback } from 'node:stream'
import { AppError } from '@meridian/contracts'

export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError'
  readonly code = 'BODY_TOO_LARGE'
  constructor(limitBytes: number) {
    super(`the request body is larger than ${limitBytes} bytes`)
  }
}

/** The client aborted its upload, or its request stream failed, before the body was complete. */
export class UploadBrokenError extends Error {
  override readonly name = 'UploadBrokenError'
  readonly code = 'UPLOAD_BROKEN'
  constructor(cause?: unknown) {
    super('the client stopped sending its request body', { cause })
  }
}

export type ClientBodyFailure = BodyTooLargeError | UploadBrokenError

/** The edge's 413, whether the length was declared or counted. */
export const payloadTooLarge = (): AppError =>
  new AppError(413, 'PAYLOAD_TOO_LARGE', { message: 'Request body is larger than 1 MB' })

/** For a client still there whose body broke off (its request stream failed). */
export const uploadBroken = (): AppError => AppError.badRequest('The request body was not received in full')

// undici stops listening to a body once it has its verdict; a later failure must not become an uncaught 'error'
const ignore = () => {}

/**
 * The body as the upstream reads it. The chunk that crosses the limit is never passed on, so an instance receives at
 * most `limitBytes`; what the client sends after that is read and dropped until the connection closes (a client that
 * is still writing when the answer comes would otherwise be reset before it reads the 413).
 */
export class LimitedRequestBody extends Transform {
  readonly #source: IncomingMessage
  readonly #limitBytes: number
  #received = 0

  constructor(source: IncomingMessage, limitBytes: number) {
    super()
    this.#source = source
    this.#limitBytes = limitBytes
    this.on('error', ignore)
    // once this stream is gone (its limit, the upstream's failure, undici done with it) nobody reads the source again
    this.once('close', () => this.#discardSource())
    // (pipe does not carry a source's failure to its destination)
    source.on('error', (error) => this.destroy(new UploadBrokenError(error)))
    source.once('close', () => {
      if (!source.complete) this.destroy(new UploadBrokenError())
    })
    source.pipe(this)
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#received += chunk.length
    if (this.#received <= this.#limitBytes) {
      callback(null, chunk)
      return
    }
    callback(new BodyTooLargeError(this.#limitBytes))
  }

  /** Why this body failed, when the client caused it (too large, aborted, its stream failed). */
  get clientFailure(): ClientBodyFailure | undefined {
    const error = this.errored
    return error instanceof BodyTooLargeError || error instanceof UploadBrokenError ? error : undefined
  }

  #discardSource(): void {
    const source = this.#source
    if (source.complete || source.destroyed) return
    source.unpipe(this)
    source.resume()
  }
}
