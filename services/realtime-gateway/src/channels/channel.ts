// What every namespace's channel works with: the typed namespace and socket of a namespace path, who is connected
// (set by the handshake, channels/handshake.ts), and ClientEvents: a namespace's client event handlers, each held to
// its API scope (contracts' realtimeScopes) and its payload validated against its contract schema first, each failure
// the spec's `error` event and a refused ack.

import {
  type Ack,
  type ApiScope,
  AppError,
  type RealtimeError,
  type RealtimeNamespace,
  type RealtimeNamespaces,
  realtimeErrorCodes,
  realtimeMessages,
} from '@meridian/contracts'
import {
  boundProblemAsAjvIssue,
  boundsExceeded,
  holdsScope,
  maxValidationDetails,
  moreProblems,
  type Principal,
  withWork,
} from '@meridian/service-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Namespace, Socket } from 'socket.io'
import type { Static, TSchema } from 'typebox'
import { Compile } from 'typebox/compile'

/** The connected user, as the handshake verified them (auth:refresh replaces the principal). */
export interface SocketUser {
  userId: string
  username: string
  role: string
  principal: Principal
}

/** What the server keeps on each socket (`socket.data`): the same on every instance (fetchSockets carries it). */
export interface SocketData {
  user: SocketUser
  /** the client's address (X-Forwarded-For of a trusted proxy, else the peer) */
  address: string
  connectedAt: string
}

/** A room some socket may no longer be in: `userId`'s sockets, or everyone's (null: the room's resource is gone). */
export interface RoomRevoked {
  room: string
  userId: string | null
}

/** Events between instances (serverSideEmit, through the adapter's stream). */
export interface InterServerEvents {
  /** room-access.ts: the sockets concerned leave the room */
  'room:revoked': (revoked: RoomRevoked) => void
}

export type ChannelNamespace<Path extends RealtimeNamespace> = Namespace<
  RealtimeNamespaces[Path]['client'],
  RealtimeNamespaces[Path]['server'],
  InterServerEvents,
  SocketData
>
export type ChannelSocket<Path extends RealtimeNamespace> = Socket<
  RealtimeNamespaces[Path]['client'],
  RealtimeNamespaces[Path]['server'],
  InterServerEvents,
  SocketData
>

/** The error event's payload of a refused request (an AppError's message, code and details; anything else generic). */
export function realtimeErrorOf(error: unknown): RealtimeError {
  if (error instanceof AppError) {
    return {
      message: error.message,
      code: error.code,
      ...(error.retryAfter !== undefined ? { retryAfter: error.retryAfter } : {}),
      ...(error.details && error.details.length > 0
        ? { details: error.details.map(({ field, message }) => ({ field, message })) }
        : {}),
    }
  }
  return { message: 'An unexpected error occurred', code: 'INTERNAL_ERROR' }
}

/** The spec's answer to a payload that fails its schema (Errors rule 6). */
export function invalidPayload(
  schema: ReturnType<typeof Compile>,
  payload: unknown,
  // sizes first (the kit's input-bounds.ts): TypeBox's list of errors checks uniqueItems pair by pair, and 40,000
  // repeated ids held the instance for tens of seconds; a caller that measured them already passes what it found
  bounds: ReturnType<typeof boundsExceeded> = boundsExceeded(schema.Type(), payload),
): RealtimeError {
  const issues =
    bounds.length > 0
      ? bounds.map(boundProblemAsAjvIssue)
      : schema.Errors(payload).map(({ instancePath, message }) => ({ instancePath, message }))
  const details = issues.slice(0, maxValidationDetails).map((issue) => ({
    field: issue.instancePath.split('/').filter(Boolean).join('.') || 'payload',
    message: issue.message,
  }))
  if (issues.length > details.length) details.push(moreProblems('payload', issues.length - details.length))
  return { code: 'VALIDATION_ERROR', message: realtimeMessages.invalidMessageFormat, details }
}

const compiled = new WeakMap<TSchema, ReturnType<typeof Compile>>()
const compiledOf = (schema: TSchema) => {
  let check = compiled.get(schema)
  if (!check) {
    check = Compile(schema)
    compiled.set(schema, check)
  }
  return check
}

/** The names of the events a socket's clients send (its namespace's client map). */
export type ClientEventOf<SocketType> =
  SocketType extends Socket<infer Listen, infer _Emit, infer _Inter, infer _Data>
    ? keyof Listen & string
    : never

type AnyAck = Ack<Record<string, unknown>>

/** The scope each event of a namespace needs (a part of contracts' realtimeScopes); null: nothing beyond connecting. */
export type EventScopes<SocketType> = { readonly [Event in ClientEventOf<SocketType>]?: ApiScope | null }

/** What a client event's handler answers: the acknowledgement's fields (`ok: true` is added), or nothing. */
type HandlerAnswer = Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined

/**
 * The client events of a namespace, each handled by a listener made once and shared by every socket of the namespace
 * (its `this` is the socket): tens of thousands of sockets are held, and a listener closure per socket and event would
 * cost each of them. `attach(socket)` listens to every event on a new socket.
 *
 * Each event needs its scope (`scopes`, from contracts' realtimeScopes: an event without an entry there is refused at
 * registration): a credential limited to scopes that lacks it gets `error` {code INSUFFICIENT_SCOPE, message naming the
 * scope} and a refused ack, before its payload is read, and nothing is done (the socket's principal is read at each
 * event: a refreshed token's scopes count from the refresh on). Each event's payload must match its schema: an invalid
 * one gets `error` {code VALIDATION_ERROR, message 'Invalid message format', details} and a refused ack; the handler's
 * answer (an object) is acked with `ok: true`; a thrown AppError is the `error` event and a refused ack (an unexpected
 * error is logged, and answered generically). An ack callback is optional: clients that expect no answer send none.
 */
export class ClientEvents<ChannelSocketType extends ChannelSocket<RealtimeNamespace>> {
  readonly #listeners: [event: string, listener: (this: Socket, ...args: unknown[]) => void][] = []
  readonly #log: FastifyBaseLogger
  readonly #scopes: EventScopes<ChannelSocketType>

  constructor(log: FastifyBaseLogger, scopes: EventScopes<ChannelSocketType>) {
    this.#log = log
    this.#scopes = scopes
  }

  on<Schema extends TSchema>(
    event: ClientEventOf<ChannelSocketType>,
    schema: Schema,
    handler: (socket: ChannelSocketType, payload: Static<Schema>) => HandlerAnswer,
  ): this {
    const scope = this.#scopes[event]
    // the table is typed to have every event; a namespace handling one it lacks must not start (nor pass unchecked)
    if (scope === undefined) throw new Error(`realtimeScopes names no scope for the client event ${event}`)
    const check = compiledOf(schema)
    const log = this.#log
    // the refusal is the same for every socket: made once
    const needs =
      scope === null ? undefined : { scope, refusal: realtimeErrorOf(AppError.insufficientScope(scope)) }
    // the payload's type is proven at run time by its schema, so the socket is listened to untyped here
    async function handle(this: Socket, ...args: unknown[]): Promise<void> {
      const ack = typeof args.at(-1) === 'function' ? (args.pop() as AnyAck) : undefined
      if (needs && !holdsScope((this.data as SocketData).user.principal, needs.scope)) {
        this.emit('error', needs.refusal)
        ack?.({ ok: false, error: needs.refusal })
        return
      }
      const payload = args[0]
      // sizes before anything else reads it (a uniqueness check is pair by pair)
      const bounds = boundsExceeded(schema, payload)
      if (bounds.length > 0 || !check.Check(payload)) {
        const error = invalidPayload(check, payload, bounds)
        this.emit('error', error)
        ack?.({ ok: false, error })
        return
      }
      try {
        const answer = await handler(this as unknown as ChannelSocketType, payload as Static<Schema>)
        ack?.({ ok: true, ...answer })
      } catch (failure) {
        const error = realtimeErrorOf(failure)
        if (!(failure instanceof AppError))
          log.error({ err: failure, event, socketId: this.id }, 'realtime event failed')
        this.emit('error', error)
        ack?.({ ok: false, error })
      }
    }
    // run as this event's work: a failure that escapes everything is logged naming it (service-kit's work-context.ts)
    function listener(this: Socket, ...args: unknown[]): Promise<void> {
      const userId = (this.data as Partial<SocketData>).user?.userId
      const work = { kind: 'realtime', transport: 'socket.io', event, connection: this.id } as const
      return withWork(userId === undefined ? work : { ...work, userId }, () => handle.apply(this, args))
    }
    this.#listeners.push([event, listener])
    return this
  }

  /** Listens to every event on the socket (the shared listeners: nothing is made per socket). */
  attach(socket: ChannelSocketType): void {
    const raw = socket as unknown as Socket
    for (const [event, listener] of this.#listeners) raw.on(event, listener)
  }
}

/**
 * The cap on rooms one socket may have joined at once (REALTIME_MAX_ROOMS_PER_SOCKET), for one kind of room (its
 * prefix: `chatroom:`, `doc:`, `room:`). Joins in flight count too, so that many at once cannot pass it together; a
 * join beyond it is refused with ROOM_LIMIT_REACHED and nothing is joined.
 */
export class RoomCap {
  readonly #pending = new WeakMap<object, number>()

  constructor(
    readonly max: number,
    readonly prefix: string,
  ) {}

  /** Runs `join` (which checks what it must, then joins `room`) if the socket may join one more room. */
  async join<Answer>(socket: Socket, room: string, join: () => Promise<Answer>): Promise<Answer> {
    if (socket.rooms.has(room)) return join()
    const pending = this.#pending.get(socket) ?? 0
    let joined = pending
    for (const each of socket.rooms) if (each.startsWith(this.prefix)) joined += 1
    if (joined >= this.max) {
      throw new AppError(409, realtimeErrorCodes.roomLimitReached, {
        message: `This socket is in ${this.max} rooms already, the most it may be in; leave one first`,
      })
    }
    this.#pending.set(socket, pending + 1)
    try {
      return await join()
    } finally {
      const left = (this.#pending.get(socket) ?? 1) - 1
      if (left > 0) this.#pending.set(socket, left)
      else this.#pending.delete(socket)
    }
  }
}
