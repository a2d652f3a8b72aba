// A connection's credential over its life (spec: Authentication 11): `auth:expiring` a minute before the token
// expires; `auth:refresh {token}` swaps in a new token of the same user, or ends in `auth:failed {message}` and the
// socket's disconnection; a token that expires without a refresh ends the same way. Cookie sessions have no `exp`:
// their sockets are not timed.
import { AppError, AuthRefresh, type RealtimeNamespace, realtimeMessages } from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import { type ChannelSocket, on, type SocketCredential } from './channel.ts'
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

export function watchCredential(
  socket: ChannelSocket<RealtimeNamespace>,
  { handshake, credentials, noticeMs, log }: WatchCredentialOptions,
): void {
  const timers = new Set<NodeJS.Timeout>()
  const clear = () => {
    for (const timer of timers) clearTimeout(timer)
    timers.clear()
  }
  const at = (moment: number, action: () => void) => {
    const delay = Math.max(0, moment - Date.now())
    const timer = setTimeout(
      () => {
        timers.delete(timer)
        if (delay > maxTimerMs) at(moment, action)
        else action()
      },
      Math.min(delay, maxTimerMs),
    )
    timers.add(timer)
  }

  const fail = () => {
    clear()
    // straight to this socket, not through the adapter's stream (as a recoverable emit would go): it must leave
    // before the disconnection, and a disconnected socket recovers nothing anyway
    socket.nsp.local.to(socket.id).emit('auth:failed', { message: realtimeMessages.invalidToken })
    // after the acknowledgement of a refused refresh has left
    setImmediate(() => socket.disconnect())
  }

  const schedule = () => {
    clear()
    const { expiresAt } = socket.data.user.principal
    if (expiresAt === undefined) return
    // one timer at a time per socket (the notice, then the end): tens of thousands of sockets each hold one
    at(expiresAt - noticeMs, () => {
      socket.emit('auth:expiring', { expiresAt })
      at(expiresAt, fail)
    })
  }

  on(
    socket,
    'auth:refresh',
    AuthRefresh,
    async ({ token }) => {
      const user = await handshake.verifyToken(token).catch(() => undefined)
      // a refresh continues the same user's connection; another user's token is a new connection's business
      if (!user || user.userId !== socket.data.user.userId || user.principal.expiresAt === undefined) {
        fail()
        throw AppError.unauthorized(realtimeMessages.invalidToken)
      }
      socket.data.user = user
      credentials.set(socket, { kind: 'bearer', token: token.replace(/^bearer\s+/i, '') })
      schedule()
      log.debug({ socketId: socket.id, userId: user.userId }, 'realtime token refreshed')
      return { expiresAt: user.principal.expiresAt }
    },
    log,
  )
  socket.on('disconnect', clear)
  schedule()
}
