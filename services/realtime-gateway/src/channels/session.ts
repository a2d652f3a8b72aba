// A connection's credential over its life (spec: Authentication 11): `auth:expiring` a minute before the token
// expires; `auth:refresh {token}` swaps in a new token of the same user, or ends in `auth:failed {message}` and the
// socket's disconnection; a token that expires without a refresh ends the same way. Cookie sessions have no `exp`:
// their sockets are not timed.
//
// Tens of thousands of sockets each have one: a watch is an object with one timer at a time and methods on its
// prototype; its timer and the disconnect listener are shared functions, not closures of each socket.
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

class CredentialWatch {
  #timer: NodeJS.Timeout | undefined

  constructor(
    readonly socket: WatchedSocket,
    readonly noticeMs: number,
  ) {}

  /** From the token's expiry: the notice, then the end. */
  schedule(): void {
    this.clear()
    const { expiresAt } = this.socket.data.user.principal
    if (expiresAt !== undefined) this.#at(expiresAt - this.noticeMs, 'notice')
  }

  clear(): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
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

  #at(moment: number, step: Step): void {
    this.#timer = setTimeout(fire, Math.min(Math.max(0, moment - Date.now()), maxTimerMs), this, moment, step)
  }

  /** The timer's moment: a step, or (past setTimeout's range) another wait. */
  reached(moment: number, step: Step): void {
    this.#timer = undefined
    if (moment - Date.now() > 0) {
      this.#at(moment, step)
      return
    }
    if (step === 'end') {
      this.fail()
      return
    }
    const { expiresAt } = this.socket.data.user.principal
    if (expiresAt === undefined) return
    this.socket.emit('auth:expiring', { expiresAt })
    this.#at(expiresAt, 'end')
  }
}

function fire(watch: CredentialWatch, moment: number, step: Step): void {
  watch.reached(moment, step)
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
