// The realtime-gateway listening on a loopback port, as clients meet it, and a real socket.io-client to connect to it.
// Instances of one test share a channel (REALTIME_REDIS_PREFIX) when started with `sharing`, and then also the first
// one's database: two instances of one service, as in production.
import { randomInt } from 'node:crypto'
import type { RealtimeNamespace } from '@meridian/contracts'
import { createDatabase } from '@meridian/db'
import {
  accessToken,
  buildServiceTestApp,
  eventually,
  scaledMs,
  tokenEnv,
  uniqueName,
  waitMs,
} from '@meridian/testkit'
import { io, type Socket } from 'socket.io-client'
import { buildApp, serviceName } from '../../src/app.ts'
import { loadRealtimeGatewayConfig } from '../../src/config.ts'
import { migrateRealtimeGatewayDatabase } from '../../src/migrations.ts'
import { buildRealtimeGatewayTestApp, type RealtimeGatewayTestApp } from './app.ts'

/** The one origin the test instances allow (REALTIME_ALLOWED_ORIGINS). */
export const allowedOrigin = 'http://console.meridian.test'

export type RealtimeInstance = RealtimeGatewayTestApp & {
  /** http://127.0.0.1:<port> */
  url: string
  port: number
}

export interface StartRealtimeOptions {
  /** another instance of the same channel: same Redis prefix, same database */
  sharing?: RealtimeInstance
}

/** A realtime-gateway listening on 127.0.0.1 (HS256 test tokens, short timings are the test's to set in `env`). */
export async function startRealtime(
  env: Record<string, string> = {},
  { sharing }: StartRealtimeOptions = {},
): Promise<RealtimeInstance> {
  const testEnv = {
    ...tokenEnv,
    REALTIME_ALLOWED_ORIGINS: allowedOrigin,
    REALTIME_REDIS_PREFIX: sharing ? sharing.config.REALTIME_REDIS_PREFIX : `${uniqueName('rt')}:`,
    // the notification service is looked up only by /notifications' fetch and read
    NOTIFICATION_DISCOVERY_WAIT_MS: '500',
    ...env,
  }
  const built = sharing
    ? await buildServiceTestApp({
        service: serviceName,
        loadConfig: loadRealtimeGatewayConfig,
        env: testEnv,
        // the first instance's database (the fresh one made for this instance goes unused)
        connect: () => createDatabase(sharing.database.url, { applicationName: `${serviceName}-test-2` }),
        migrate: (sql) => migrateRealtimeGatewayDatabase(sql),
        build: async (context) => {
          const service = await buildApp(context)
          context.onClose(async () => {
            for (const client of service.clients) if ('stop' in client) await client.stop()
          })
          return service
        },
      })
    : await buildRealtimeGatewayTestApp(testEnv)
  await built.app.listen({ host: '127.0.0.1', port: 0 })
  const address = built.app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return Object.assign(built, { url: `http://127.0.0.1:${port}`, port })
}

/** An address of the documentation range, different for each call: each connection's limits start afresh. */
export const someAddress = () => `198.51.100.${randomInt(1, 255)}, 203.0.113.${randomInt(1, 255)}`

export interface ConnectOptions {
  /** auth.token of the handshake; default a fresh user's token; null: none */
  token?: string | null
  /** headers of the upgrade (Origin, Cookie, X-Forwarded-For, ...); a fresh X-Forwarded-For unless given */
  headers?: Record<string, string>
  /** socket.io-client options beside those */
  options?: Parameters<typeof io>[1]
}

/**
 * A socket.io-client socket connected to `namespace` over WebSocket (reconnection off), or the connect_error that
 * refused it.
 */
export function connect(
  url: string,
  namespace: RealtimeNamespace,
  { token, headers, options }: ConnectOptions = {},
): Promise<Socket> {
  const handshakeToken = token === undefined ? accessToken('user') : token
  const socket: Socket = io(`${url}${namespace === '/' ? '' : namespace}`, {
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    ...(handshakeToken === null ? {} : { auth: { token: handshakeToken } }),
    extraHeaders: { 'x-forwarded-for': someAddress(), ...headers },
    ...options,
  })
  return new Promise<Socket>((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('connect_error', (error) => {
      socket.close()
      reject(error)
    })
  })
}

/** The next `event` on `socket` (its first argument), failing after `timeoutMs` (the tests' scaled wait). */
export function nextEvent<T = unknown>(
  socket: Socket,
  event: string,
  timeoutMs = scaledMs(waitMs),
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${timeoutMs} ms`)), timeoutMs)
    socket.once(event, (payload: T) => {
      clearTimeout(timer)
      resolve(payload)
    })
  })
}

/**
 * A client of `namespace` that reconnects at once (to `url` first, then wherever its manager's uri points), as a
 * browser's would, and so presents its session for recovery when it comes back.
 */
export function recoveringClient(url: string, namespace: RealtimeNamespace, userId: string): Socket {
  return io(`${url}${namespace === '/' ? '' : namespace}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: true,
    reconnectionDelay: 300,
    reconnectionDelayMax: 300,
    randomizationFactor: 0,
    auth: { token: accessToken('user', userId) },
    extraHeaders: { 'x-forwarded-for': someAddress() },
  })
}

/** Where the client's manager connects next (as a balancer would send it elsewhere). */
export const pointAt = (client: Socket, url: string) => {
  ;(client.io as unknown as { uri: string }).uri = url
}

/**
 * The client loses its transport, and `from`, the instance it was on, has seen it go (its socket's session kept
 * for recovery with the rooms it was in). Its next connection goes to `to`; without one, it stays away (its attempts
 * are refused, as on a network that is down) until `pointAt` sends it somewhere, so what happens meanwhile is done
 * while it is away, however slow the machine — and its session is in Redis by the time this resolves.
 */
export async function loseTransport(
  client: Socket,
  from: RealtimeInstance,
  path: RealtimeNamespace,
  to?: RealtimeInstance,
): Promise<void> {
  const id = client.id ?? ''
  // socket.io-client keeps the session's private id to itself
  const pid = (client as unknown as { _pid?: string })._pid
  const namespace = from.app.realtime.namespace(path)
  pointAt(client, to?.url ?? 'http://127.0.0.1:9')
  const away = nextEvent<string>(client, 'disconnect')
  client.io.engine.close()
  const reason = await away
  if (reason !== 'forced close') throw new Error(`the client went with ${reason}, not forced close`)
  await eventually('the instance sees the client go', () => !namespace.sockets.has(id), undefined, 10)
  // the instance stores the session without waiting for Redis; a client that stays away finds it there when it comes
  // back (one sent elsewhere at once may already have taken it)
  if (!to && pid) {
    const sessionKey = `${from.config.REALTIME_REDIS_PREFIX}session:${pid}`
    await eventually(
      'the session is kept',
      async () => (await from.redis.exists(sessionKey)) === 1,
      undefined,
      10,
    )
  }
}

/** The sockets a test file opens, closed together in its afterAll. */
export function socketKeeper() {
  const open: Socket[] = []
  return {
    keep(socket: Socket): Socket {
      open.push(socket)
      return socket
    },
    closeAll(): void {
      for (const socket of open.splice(0)) socket.close()
    },
  }
}

/** The refusal of a connection that was expected to fail: connect_error's message and data. */
export async function refusalOf(attempt: Promise<Socket>): Promise<{ message: string; data: unknown }> {
  const error = await attempt.then(
    (socket) => {
      socket.close()
      throw new Error('connected, but a refusal was expected')
    },
    (failure: Error & { data?: unknown }) => failure,
  )
  return { message: error.message, data: error.data }
}

/** An acknowledgement: `ok` and what the server answered with it. */
export type Answer = { ok: boolean } & Record<string, unknown>

/** Emits `event` (with `payload`, if any) and waits for its acknowledgement. */
export function send(
  socket: Socket,
  event: string,
  payload?: unknown,
  timeoutMs = scaledMs(waitMs),
): Promise<Answer> {
  return payload === undefined
    ? socket.timeout(timeoutMs).emitWithAck(event)
    : socket.timeout(timeoutMs).emitWithAck(event, payload)
}

/** Every `event` the socket hears from now on. */
export function heard<T = Record<string, unknown>>(socket: Socket, event: string): T[] {
  const payloads: T[] = []
  socket.on(event, (payload: T) => payloads.push(payload))
  return payloads
}

/**
 * Waits until `payloads` holds `count` of them. With connection-state recovery every emit, to one socket too, goes
 * through the adapter's stream first, so an event may arrive after the ack of the request that caused it.
 */
export async function until<T>(payloads: T[], count: number): Promise<T[]> {
  await eventually(`${count} events`, async () => payloads.length >= count)
  return payloads
}
