// /ws, the raw RFC 6455 endpoint (spec: Real-time channel upgrade, Limits): the same admission as Socket.IO's — the
// address's attempts and concurrent slots, the credential (session cookie, or `Authorization: Bearer` on the upgrade;
// never a token in the URL) — refused before the upgrade with the error envelope; a disallowed Origin is upgraded
// and closed with 4001 `Origin not allowed`, as the spec says. Then `welcome`, `echo` of every message, and a ping
// every interval: a socket that did not answer the previous one is terminated.
import { randomUUID } from 'node:crypto'
import { AppError, originNotAllowedCloseCode, realtimeMessages, realtimePaths } from '@meridian/contracts'
import type { ServiceApp } from '@meridian/service-kit'
import type { WebSocket } from 'ws'
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
          const { user } = await handshake.authenticate(presented)
          const connectionId = randomUUID()
          await handshake.hold(address, connectionId)
          request.admission = { user, address, connectionId }
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
      socket.on('pong', () => awaitingPong.delete(socket))
      socket.on('close', () => {
        realtime.rawSockets.delete(socket)
        realtime.connectionClosed()
        handshake.release(admission.address, admission.connectionId).catch((err: unknown) => {
          request.log.warn({ err }, 'releasing a connection slot failed; its lease expires it')
        })
      })
      const send = (message: Record<string, unknown>) => {
        socket.send(JSON.stringify(message))
        realtime.count('sent')
      }
      socket.on('message', (data, isBinary) => {
        realtime.count('received')
        const text = isBinary ? undefined : data.toString()
        let payload: unknown = text
        if (text !== undefined) {
          try {
            payload = JSON.parse(text)
          } catch {
            // a text that is not JSON is echoed as the text it is
          }
        } else {
          payload = { binary: true, bytes: (data as Buffer).length }
        }
        send({ type: 'echo', payload })
      })
      send({ type: 'welcome', message: `Welcome, ${admission.user.username}` })
    },
  )
}

declare module 'fastify' {
  interface FastifyRequest {
    /** /ws: who was admitted before the upgrade */
    admission?: { user: import('./channel.ts').SocketUser; address: string; connectionId: string }
  }
}
