// How fast clients may send (Socket.IO and /ws alike), so that one client cannot take the channel's time from the
// others:
// - each connection has a token bucket: `ratePerSecond` events, up to `burst` at once after a quiet moment (a Socket.IO
//   connection's namespaces share it: multiplexing does not multiply the rate);
// - each user has so many events per window, all their connections on every instance together (data/user-rates.ts);
// - an event over either is refused with `error {code: RATE_LIMITED, message, retryAfter}` (and a refused ack when
//   it asked for one) and not handled; after `refusalsBeforeDisconnect` refusals the connection is closed. Refusals
//   are forgiven once the connection's bucket has filled up again (it kept under its rate for a while).
// Every event counts, whatever its name (an unknown one too): each costs the server its decoding.
import { type RealtimeError, type RealtimeNamespace, realtimeMessages } from '@meridian/contracts'
import type { Taken, UserRate } from '../domain/live-state.ts'
import type { ChannelSocket } from './channel.ts'

export interface EventLimitsOptions {
  /** REALTIME_EVENTS_PER_SECOND */
  ratePerSecond: number
  /** REALTIME_EVENT_BURST */
  burst: number
  /** REALTIME_REFUSALS_BEFORE_DISCONNECT */
  refusalsBeforeDisconnect: number
  /** REALTIME_USER_EVENTS_PER_WINDOW per REALTIME_USER_EVENTS_WINDOW_MS, across instances */
  userEvents: UserRate
  /** ms, monotonic (performance.now by default) */
  now?: () => number
}

/** What became of one event. */
export type Charge = { accepted: true } | { accepted: false; error: RealtimeError; disconnect: boolean }

const accepted: Charge = Object.freeze({ accepted: true })

/** A connection's bucket, made at its first event (a connection that never sends costs nothing here). */
class Bucket {
  refusals = 0
  constructor(
    public tokens: number,
    public at: number,
  ) {}
}

type Ack = (answer: { ok: false; error: RealtimeError }) => void

export class EventLimits {
  readonly #buckets = new WeakMap<object, Bucket>()
  readonly #options: EventLimitsOptions
  readonly #now: () => number

  constructor(options: EventLimitsOptions) {
    this.#options = options
    this.#now = options.now ?? (() => performance.now())
  }

  /**
   * Charges one event of `connection` (a Socket.IO engine connection, a /ws socket) sent by `userId`. At once, except
   * for a user's first event of a window across instances (a promise, while Redis is asked).
   */
  charge(connection: object, userId: string): Charge | Promise<Charge> {
    const { ratePerSecond, burst } = this.#options
    const now = this.#now()
    let bucket = this.#buckets.get(connection)
    if (bucket === undefined) {
      bucket = new Bucket(burst, now)
      this.#buckets.set(connection, bucket)
    } else {
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) * ratePerSecond) / 1000)
      bucket.at = now
    }
    // full again: the connection kept under its rate long enough, its past refusals are forgiven
    if (bucket.tokens >= burst) bucket.refusals = 0
    if (bucket.tokens < 1) return this.#refuse(bucket, Math.ceil((1 - bucket.tokens) / ratePerSecond))
    bucket.tokens -= 1
    const taken = this.#options.userEvents.take(userId)
    return taken instanceof Promise
      ? taken.then((answer) => this.#userCharge(bucket, answer))
      : this.#userCharge(bucket, taken)
  }

  /**
   * Limits a Socket.IO socket's events (its middleware, made once per socket): a refused event is answered and
   * dropped, and the connection closed after too many.
   */
  guard(socket: ChannelSocket<RealtimeNamespace>): void {
    socket.use((event, next) => {
      // the user as now (a refresh may have replaced the principal, never the user)
      const charge = this.charge(socket.conn, socket.data.user.userId)
      if (charge instanceof Promise) void charge.then((settled) => settle(socket, event, next, settled))
      else settle(socket, event, next, charge)
    })
  }

  #userCharge(bucket: Bucket, taken: Taken): Charge {
    return taken.allowed ? accepted : this.#refuse(bucket, taken.retryAfterSeconds)
  }

  #refuse(bucket: Bucket, retryAfter: number): Charge {
    bucket.refusals += 1
    const disconnect = bucket.refusals >= this.#options.refusalsBeforeDisconnect
    return {
      accepted: false,
      disconnect,
      error: {
        code: 'RATE_LIMITED',
        message: disconnect ? realtimeMessages.floodDisconnect : realtimeMessages.rateLimited,
        retryAfter: Math.max(1, retryAfter),
      },
    }
  }
}

/** Lets the event through, or answers its refusal (error, refused ack) and drops it; the last one closes the connection. */
function settle(
  socket: ChannelSocket<RealtimeNamespace>,
  event: unknown[],
  next: (error?: Error) => void,
  charge: Charge,
): void {
  if (charge.accepted) {
    next()
    return
  }
  const ack = event.at(-1)
  if (typeof ack === 'function') (ack as Ack)({ ok: false, error: charge.error })
  // to this socket alone, not through the adapter's stream (where a recoverable emit goes): a refusal is worth
  // nothing to a client that comes back later, and a flood of them must not reach Redis
  socket.nsp.local.to(socket.id).emit('error', charge.error)
  // the whole connection (every namespace on it): the bucket is the connection's
  if (charge.disconnect) socket.disconnect(true)
}
