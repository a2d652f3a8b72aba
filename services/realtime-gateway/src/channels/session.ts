// A connection's credential over its life (spec: Authentication 11): `auth:expiring` a minute before the token
// expires; `auth:refresh {token}` swaps in a new token of the same user, or ends in `auth:failed {message}` and the
// socket's disconnection; a token that expires without a refresh ends the same way. Cookie sessions have no `exp`:
// their sockets are not timed.
//
// Tens of thousands of sockets each have one: a watch is an object with methods on its prototype, its moments are
// kept by one clock for all of them (a heap and a single timer), and the disconnect listener is a shared function.
import { AppError, AuthRefresh, type RealtimeNamespace, realtimeMessages } from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import { type ChannelSocket, ClientEvents, type SocketCredential } from './channel.ts'
import type { Handshake } from './handshake.ts'

export interface WatchCredentialOptions {
  handshake: Pick<Handshake, 'verifyToken'>
  /** where the socket's credential is kept for calls on the user's behalf: the refreshed token replaces it */
  credentials: WeakMap<object, SocketCredential>
  /** how long before expiry auth:expiring is sent (REALTIME_TOKEN_NOTICE_MS) */
  noticeMs: number
  log: FastifyBaseLogger
}

/** setTimeout's longest delay; a later moment is reached in several steps */
const maxTimerMs = 2 ** 31 - 1

type Step = 'notice' | 'end'
type WatchedSocket = ChannelSocket<RealtimeNamespace>

const watches = new WeakMap<object, CredentialWatch>()

/** What the clock times: its moment and its place are kept on it, so that nothing else is made per item. */
export interface Timed {
  /** when the clock runs reached(): epoch ms */
  due: number
  /** its place in the clock's heap; -1 when not scheduled */
  slot: number
  reached(): void
}

/**
 * Items' next moments in one binary heap (earliest first) with one timer for the earliest: a Node timer per socket
 * costs it ~200 bytes more than its place here. Each item knows its slot, so a refresh or a disconnection takes it out
 * at once.
 */
export class WatchClock<Item extends Timed = Timed> {
  readonly #heap: Item[] = []
  #timer: NodeJS.Timeout | undefined
  #armedFor = Number.POSITIVE_INFINITY

  /** The watch is due at `moment` (replacing what it was due for). */
  schedule(watch: Item, moment: number): void {
    if (watch.slot >= 0) this.#remove(watch.slot)
    watch.due = moment
    watch.slot = this.#heap.length
    this.#heap.push(watch)
    this.#up(watch.slot)
    this.#arm()
  }

  cancel(watch: Item): void {
    if (watch.slot < 0) return
    this.#remove(watch.slot)
    this.#arm()
  }

  get size(): number {
    return this.#heap.length
  }

  readonly #fire = (): void => {
    this.#timer = undefined
    this.#armedFor = Number.POSITIVE_INFINITY
    const now = Date.now()
    for (let first = this.#heap[0]; first !== undefined && first.due <= now; first = this.#heap[0]) {
      this.#remove(0)
      // a watch's step schedules its next one (or fails the socket): nothing here depends on what it does
      first.reached()
    }
    this.#arm()
  }

  #arm(): void {
    const first = this.#heap[0]
    if (first === undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
      this.#armedFor = Number.POSITIVE_INFINITY
      return
    }
    if (this.#timer !== undefined && first.due === this.#armedFor) return
    clearTimeout(this.#timer)
    this.#armedFor = first.due
    // past setTimeout's range the timer fires early, finds nothing due and waits again
    this.#timer = setTimeout(this.#fire, Math.min(Math.max(0, first.due - Date.now()), maxTimerMs))
    // the server's own handles keep the process alive; the credentials of its sockets do not
    this.#timer.unref()
  }

  #remove(slot: number): void {
    const heap = this.#heap
    const removed = heap[slot]!
    const last = heap.pop()!
    removed.slot = -1
    if (last === removed) return
    heap[slot] = last
    last.slot = slot
    this.#down(slot)
    this.#up(last.slot)
  }

  #up(slot: number): void {
    const heap = this.#heap
    const watch = heap[slot]!
    while (slot > 0) {
      const parentSlot = (slot - 1) >> 1
      const parent = heap[parentSlot]!
      if (parent.due <= watch.due) break
      heap[slot] = parent
      parent.slot = slot
      slot = parentSlot
    }
    heap[slot] = watch
    watch.slot = slot
  }

  #down(slot: number): void {
    const heap = this.#heap
    const watch = heap[slot]!
    for (;;) {
      const left = 2 * slot + 1
      if (left >= heap.length) break
      const right = left + 1
      const child = right < heap.length && heap[right]!.due < heap[left]!.due ? right : left
      if (heap[child]!.due >= watch.due) break
      heap[slot] = heap[child]!
      heap[slot]!.slot = slot
      slot = child
    }
    heap[slot] = watch
    watch.slot = slot
  }
}

const clock = new WatchClock<CredentialWatch>()

class CredentialWatch implements Timed {
  due = 0
  slot = -1
  #step: Step = 'notice'

  constructor(
    readonly socket: WatchedSocket,
    readonly noticeMs: number,
  ) {}

  /** From the token's expiry: the notice, then the end. */
  schedule(): void {
    const { expiresAt } = this.socket.data.user.principal
    if (expiresAt === undefined) {
      this.clear()
      return
    }
    this.#step = 'notice'
    clock.schedule(this, expiresAt - this.noticeMs)
  }

  clear(): void {
    clock.cancel(this)
  }

  fail(): void {
    this.clear()
    const { socket } = this
    // straight to this socket, not through the adapter's stream (as a recoverable emit would go): it must leave
    // before the disconnection, and a disconnected socket recovers nothing anyway
    socket.nsp.local.to(socket.id).emit('auth:failed', { message: realtimeMessages.invalidToken })
    // after the acknowledgement of a refused refresh has left
    setImmediate(disconnect, socket)
  }

  /** Its moment has come: the notice (then the end is due at expiry), or the end. */
  reached(): void {
    if (this.#step === 'end') {
      this.fail()
      return
    }
    const { expiresAt } = this.socket.data.user.principal
    if (expiresAt === undefined) return
    this.socket.emit('auth:expiring', { expiresAt })
    this.#step = 'end'
    clock.schedule(this, expiresAt)
  }
}

function disconnect(socket: WatchedSocket): void {
  socket.disconnect()
}

/** `this` is the socket that disconnected. */
function stopWatching(this: object): void {
  watches.get(this)?.clear()
}

export interface CredentialWatcher {
  /** Times the socket's credential from now on, and answers its auth:refresh. */
  watch(socket: WatchedSocket): void
}

/** One for the server: its auth:refresh listener and the watches' timers are shared by every socket. */
export function credentialWatcher({
  handshake,
  credentials,
  noticeMs,
  log,
}: WatchCredentialOptions): CredentialWatcher {
  const events = new ClientEvents<WatchedSocket>(log).on(
    'auth:refresh',
    AuthRefresh,
    async (socket, { token }) => {
      // every watched socket has its watch (watch() below made it before it listened)
      const watch = watches.get(socket)!
      const user = await handshake.verifyToken(token).catch(() => undefined)
      // a refresh continues the same user's connection; another user's token is a new connection's business
      if (!user || user.userId !== socket.data.user.userId || user.principal.expiresAt === undefined) {
        watch.fail()
        throw AppError.unauthorized(realtimeMessages.invalidToken)
      }
      socket.data.user = user
      credentials.set(socket, { kind: 'bearer', token: token.replace(/^bearer\s+/i, '') })
      watch.schedule()
      log.debug({ socketId: socket.id, userId: user.userId }, 'realtime token refreshed')
      return { expiresAt: user.principal.expiresAt }
    },
  )

  return {
    watch(socket) {
      const watch = new CredentialWatch(socket, noticeMs)
      watches.set(socket, watch)
      events.attach(socket)
      socket.on('disconnect', stopWatching)
      watch.schedule()
    },
  }
}
