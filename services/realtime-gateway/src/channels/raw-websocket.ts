// /ws, the raw RFC 6455 endpoint (spec: Real-time channel upgrade, Limits): the same admission as Socket.IO's — the
// address's attempts and concurrent slots, the credential (session cookie, or `Authorization: Bearer` on the upgrade;
// never a token in the URL) — refused before the upgrade with the error envelope; a disallowed Origin is upgraded
// and closed with 4001 `Origin not allowed`, as the spec says. Then `welcome`, `echo` of every message, and a ping
// every interval: a socket that did not answer the previous one is terminated.
//
// The same rules as Socket.IO's after that: the credential is watched (session.ts: `{type: 'auth:expiring',
// expiresAt}` before a token expires, `{type: 'auth:refresh', token}` answered `{type: 'auth:refreshed', expiresAt}`;
// `{type: 'auth:failed', message}` and close code 4401 when it expires, is revoked or its session logged out), and
// the messages are limited (event-limits.ts: `{type: 'error', code: 'RATE_LIMITED', message, retryAfter}`, then close
// code 1008).
import { randomUUID } from 'node:crypto'
import {
  AppError,
  AuthRefresh,
  credentialFailedCloseCode,
  originNotAllowedCloseCode,
  rateLimitedCloseCode,
  realtimeMessages,
  realtimePaths,
} from '@meridian/contracts'
import {
  jsonBodyMessages,
  jsonDepthExceeds,
  maxJsonDepth,
  type ServiceApp,
  withWork,
} from '@meridian/service-kit'
import { Value } from 'typebox/value'
import type { RawData, WebSocket } from 'ws'
import type { SocketCredential } from '../clients/forwarded-credential.ts'
import type { SocketUser } from './channel.ts'
import type { Charge } from './event-limits.ts'
import { type Handshake, HandshakeRefusal } from './handshake.ts'
import type { RealtimeChannel } from './realtime-server.ts'

export interface RawWebSocketOptions {
  handshake: Handshake
  realtime: RealtimeChannel
  pingIntervalMs: number
}

const statusOf: Record<HandshakeRefusal['code'], number> = {
  FORBIDDEN: 403,
  UNAUTHORIZED: 401,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  // /ws needs no scope (realtimeScopes.rawWebSocket): none of its refusals is this one
  INSUFFICIENT_SCOPE: 403,
}

const appErrorOf = (refusal: HandshakeRefusal): AppError =>
  refusal.code === 'RATE_LIMITED'
    ? AppError.rateLimited(60, refusal.message)
    : new AppError(statusOf[refusal.code], refusal.code, { message: refusal.message })

export async function rawWebSocketRoutes(
  app: ServiceApp,
  { handshake, realtime, pingIntervalMs }: RawWebSocketOptions,
) {
  /** sockets that have not answered the last ping */
  const awaitingPong = new WeakSet<WebSocket>()
  const heartbeat = setInterval(() => {
    for (const socket of realtime.rawSockets) {
      if (awaitingPong.has(socket)) {
        socket.terminate()
        continue
      }
      awaitingPong.add(socket)
      socket.ping()
    }
  }, pingIntervalMs)
  heartbeat.unref()
  app.addHook('onClose', async () => clearInterval(heartbeat))

  app.get(
    realtimePaths.rawWebSocket,
    {
      websocket: true,
      config: { rateLimit: false },
      // admission before the upgrade: a refusal is an HTTP answer in the error envelope
      preValidation: async (request) => {
        if (realtime.closing) throw AppError.serviceUnavailable()
        const presented = { request: request.raw }
        const originAllowed = (() => {
          try {
            handshake.checkOrigin(presented)
            return true
          } catch {
            return false
          }
        })()
        try {
          const address = request.ip
          await handshake.countAttempt(address)
          if (!originAllowed) return
          const { user, credential } = await handshake.authenticate(presented)
          const connectionId = randomUUID()
          await handshake.hold(address, connectionId)
          request.admission = { user, credential, address, connectionId }
        } catch (refusal) {
          throw refusal instanceof HandshakeRefusal ? appErrorOf(refusal) : refusal
        }
      },
    },
    (socket, request) => {
      const { admission } = request
      if (!admission) {
        // only a disallowed origin reaches here without one (spec: close code 4001)
        socket.close(originNotAllowedCloseCode, realtimeMessages.originNotAllowed)
        return
      }
      realtime.rawSockets.add(socket)
      realtime.connectionOpened()
      const send = (message: Record<string, unknown>) => {
        if (socket.readyState !== socket.OPEN) return
        socket.send(JSON.stringify(message))
        realtime.count('sent')
      }
      const watch = realtime.watcher.watchRaw(
        { send, close: (message) => socket.close(credentialFailedCloseCode, message) },
        admission.user,
        admission.credential,
      )
      socket.on('pong', () => awaitingPong.delete(socket))
      socket.on('close', () => {
        watch.stop()
        realtime.rawSockets.delete(socket)
        realtime.connectionClosed()
        handshake.release(admission.address, admission.connectionId).catch((err: unknown) => {
          request.log.warn({ err }, 'releasing a connection slot failed; its lease expires it')
        })
      })
      const handle = (charge: Charge, data: RawData, isBinary: boolean) => {
        if (!charge.accepted) {
          send({ type: 'error', ...charge.error })
          if (charge.disconnect) socket.close(rateLimitedCloseCode, realtimeMessages.floodDisconnect)
          return
        }
        const payload = payloadOf(data, isBinary)
        if (payload === tooDeep) {
          // refused before anything recursive reads it: echoed, it overflowed JSON.stringify's stack and ended the
          // instance (a 200 KB message of 100,000 nested arrays)
          send({
            type: 'error',
            code: 'VALIDATION_ERROR',
            message: realtimeMessages.invalidMessageFormat,
            details: [{ field: 'payload', message: jsonBodyMessages.tooDeep }],
          })
          return
        }
        if (isRefresh(payload)) {
          // a refused refresh has been told (auth:failed) and closed the connection already
          watch.refresh(payload.token).then(
            (expiresAt) => send({ type: 'auth:refreshed', expiresAt }),
            () => {},
          )
          return
        }
        send({ type: 'echo', payload })
      }
      // each message runs as its work: a failure that escapes everything is logged naming it (work-context.ts)
      const work = {
        kind: 'realtime',
        transport: 'ws',
        event: 'message',
        connection: request.id,
        userId: admission.user.userId,
      } as const
      socket.on('message', (data, isBinary) =>
        withWork(work, () => {
          realtime.count('received')
          if (socket.readyState !== socket.OPEN) return
          const charge = realtime.eventLimits.charge(socket, watch.user.userId)
          if (charge instanceof Promise) void charge.then((settled) => handle(settled, data, isBinary))
          else handle(charge, data, isBinary)
        }),
      )
      send({ type: 'welcome', message: `Welcome, ${admission.user.username}` })
      // a credential revoked while the upgrade was being made has closed the socket already
      if (socket.readyState !== socket.OPEN) watch.stop()
    },
  )
}

/** What payloadOf answers for JSON nested deeper than the kit's bound (maxJsonDepth). */
const tooDeep = Symbol('too deep')

/**
 * A message as the client sent it: its JSON, a text that is not JSON as the text, a binary one described; `tooDeep`
 * for a text nested deeper than maxJsonDepth (counted without parsing it).
 */
function payloadOf(data: RawData, isBinary: boolean): unknown {
  if (isBinary) return { binary: true, bytes: (data as Buffer).length }
  const text = data.toString()
  if (jsonDepthExceeds(text, maxJsonDepth)) return tooDeep
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** `{type: 'auth:refresh', token}`: a new token for the connection (spec: Authentication 11, as on Socket.IO). */
function isRefresh(payload: unknown): payload is { type: 'auth:refresh'; token: string } {
  if (typeof payload !== 'object' || payload === null) return false
  const { type, token } = payload as Record<string, unknown>
  return type === 'auth:refresh' && Value.Check(AuthRefresh, { token })
}

declare module 'fastify' {
  interface FastifyRequest {
    /** /ws: who was admitted before the upgrade */
    admission?: { user: SocketUser; credential: SocketCredential; address: string; connectionId: string }
  }
}
