// Emitting an event that expects an acknowledgement as a Promise: resolves with the answer, rejects on a refusal or
// when no answer arrives in time.

import type { Socket } from 'socket.io-client'
import type { RealtimeError } from './contracts.ts'

// socket.io's own events-map constraint (an interface of listeners satisfies it, unlike a Record of functions).
// biome-ignore lint/suspicious/noExplicitAny: as socket.io declares it
type EventsMap = { [event: string]: any }

type AckOf<Listener> = Listener extends (...args: infer Params) => void
  ? Required<Params> extends [...unknown[], infer Last]
    ? NonNullable<Last> extends (answer: infer Answer) => void
      ? { payload: Required<Params> extends [...infer Payload, unknown] ? Payload : never; answer: Answer }
      : never
    : never
  : never

/** The events of `Events` whose last argument is an acknowledgement callback. */
export type RequestEvent<Events> = {
  [Event in keyof Events & string]: [AckOf<Events[Event]>] extends [never] ? never : Event
}[keyof Events & string]

/** The arguments sent before the acknowledgement callback. */
export type RequestPayload<Events, Event extends RequestEvent<Events>> = AckOf<Events[Event]>['payload']

/** The acknowledgement of a granted request (the `{ ok: true }` or `{ success: true }` branch). */
export type RequestAnswer<Events, Event extends RequestEvent<Events>> = Exclude<
  AckOf<Events[Event]>['answer'],
  { ok: false } | { success: false }
>

/** A socket whose emitted events are `Emit` (what `client.namespace(...)` returns is one). */
// biome-ignore lint/suspicious/noExplicitAny: the events heard do not matter here
export type EmittingSocket<Emit extends EventsMap> = Socket<any, Emit>

/** The server refused the request: its acknowledgement was `{ ok: false, error }` (or `{ success: false, error }`). */
export class RealtimeRequestError extends Error {
  override readonly name = 'RealtimeRequestError'
  readonly event: string
  readonly code: string | undefined
  readonly details: RealtimeError['details']

  constructor(event: string, error: RealtimeError) {
    super(error.message)
    this.event = event
    this.code = error.code
    this.details = error.details
  }
}

/** No acknowledgement arrived within the timeout (or the socket disconnected while waiting). */
export class RealtimeTimeoutError extends Error {
  override readonly name = 'RealtimeTimeoutError'
  readonly event: string
  readonly timeoutMs: number

  constructor(event: string, timeoutMs: number, cause: unknown) {
    super(`No acknowledgement of ${event} within ${timeoutMs} ms`, { cause })
    this.event = event
    this.timeoutMs = timeoutMs
  }
}

/** How long `request` waits for an acknowledgement unless the socket's client says otherwise. */
export const defaultRequestTimeoutMs = 10_000

const requestTimeouts = new WeakMap<object, number>()

/** Records the request timeout of a socket created by a realtime client. */
export function setRequestTimeout(socket: object, timeoutMs: number): void {
  requestTimeouts.set(socket, timeoutMs)
}

/**
 * Emits `event` with `payload` and resolves with the acknowledgement, waiting as long as the client's
 * `requestTimeoutMs` (default 10 s). Rejects with a {@link RealtimeRequestError} carrying the server's
 * `{ message, code, details }` when the answer is a refusal, and a {@link RealtimeTimeoutError} without an answer.
 */
export function request<Emit extends EventsMap, Event extends RequestEvent<Emit>>(
  socket: EmittingSocket<Emit>,
  event: Event,
  ...payload: RequestPayload<Emit, Event>
): Promise<RequestAnswer<Emit, Event>> {
  return requestWithin(requestTimeouts.get(socket) ?? defaultRequestTimeoutMs, socket, event, ...payload)
}

/** {@link request} with an explicit timeout in ms. */
export async function requestWithin<Emit extends EventsMap, Event extends RequestEvent<Emit>>(
  timeoutMs: number,
  socket: EmittingSocket<Emit>,
  event: Event,
  ...payload: RequestPayload<Emit, Event>
): Promise<RequestAnswer<Emit, Event>> {
  let answer: unknown
  try {
    // The typed emitWithAck cannot follow generic event maps; the signature above carries the types.
    answer = await (socket as unknown as Socket)
      .timeout(timeoutMs)
      .emitWithAck(event, ...(payload as unknown[]))
  } catch (cause) {
    throw new RealtimeTimeoutError(event, timeoutMs, cause)
  }
  const refusal = refusalOf(answer)
  if (refusal) throw new RealtimeRequestError(event, refusal)
  return answer as RequestAnswer<Emit, Event>
}

/** The error of a refusal, or undefined when the answer grants the request. */
function refusalOf(answer: unknown): RealtimeError | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined
  const { ok, success, error } = answer as { ok?: unknown; success?: unknown; error?: Partial<RealtimeError> }
  if (ok !== false && success !== false) return undefined
  const message = typeof error?.message === 'string' ? error.message : 'Request refused'
  return { ...error, message }
}
