// The realtime channel on the service's Fastify server: Socket.IO (protocol v5 over Engine.IO v4, so the official
// clients of every platform connect unchanged) at /socket.io/ and the raw RFC 6455 endpoint /ws of @fastify/websocket.
//
// One server, two WebSocket stacks: @fastify/websocket routes every upgrade through Fastify (a path it has no route for
// is answered 404), and Engine.IO wants the upgrades of its path. So neither listens to the server's `upgrade` event:
// one dispatcher does, and hands /socket.io/ to the engine and everything else to Fastify. Long-polling requests go
// through a Fastify route (hooks, request ids, maintenance) whose body is left unread for the engine.
//
// Every namespace admits a socket through the handshake (channels/handshake.ts); a client's connection is counted once
// (attempts, concurrent slots) however many namespaces it multiplexes, even when they join at the same moment; a
// credential limited to scopes joins only the namespaces whose connect scope it holds (contracts' realtimeScopes).
// Several instances share rooms, broadcasts and connection-state recovery through Redis streams
// (@socket.io/redis-streams-adapter); a recovered socket is put back only into rooms it may still be in, and gets each
// broadcast of them it missed exactly once (exactly-once-recovery.ts). Each socket's credential is watched (session.ts:
// expiry, refresh, revocations, logout) and its events limited (event-limits.ts) and held to their scopes (channel.ts).
import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { Server as HttpServer, IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import fastifyWebsocket from '@fastify/websocket'
import {
  type RealtimeNamespace,
  type RealtimeNamespaces,
  realtimeLimits,
  realtimeMessages,
  realtimePaths,
  type SessionClientEvents,
  type SessionServerEvents,
} from '@meridian/contracts'
import type { ServiceApp } from '@meridian/service-kit'
import { createAdapter } from '@socket.io/redis-streams-adapter'
import { Server as Engine, type Socket as EngineSocket } from 'engine.io'
import type { FastifyBaseLogger } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { Counter, Gauge } from 'prom-client'
import { Server, type Socket } from 'socket.io'
import type { WebSocket } from 'ws'
import type { SocketCredential } from '../clients/forwarded-credential.ts'
import type { MayBeIn } from '../domain/channel-rooms.ts'
import { boundedParser } from './bounded-parser.ts'
import type { ChannelNamespace, ChannelSocket, InterServerEvents, SocketData } from './channel.ts'
import type { EventLimits } from './event-limits.ts'
import { exactlyOnceRecovery, type RecoverableAdapter } from './exactly-once-recovery.ts'
import { assertNamespaceScope, type Handshake, HandshakeRefusal } from './handshake.ts'
import { type CredentialWatcher, credentialWatcher } from './session.ts'

export interface RealtimeServerOptions {
  handshake: Handshake
  /** the service's Redis (who is connected) */
  redis: Redis
  /** a Redis connection of the adapter's own (it blocks on XREAD) */
  adapterRedis: Redis
  /** REALTIME_REDIS_PREFIX: the adapter's stream and recovery sessions live under it */
  redisPrefix: string
  allowedOrigins: readonly string[]
  pingIntervalMs: number
  pingTimeoutMs: number
  connectTimeoutMs: number
  recoveryMs: number
  tokenNoticeMs: number
  /** on shutdown: between server:restart and closing the connections */
  restartNoticeMs: number
  /** how fast each connection and each user may send */
  eventLimits: EventLimits
}

/** What the channels register on. */
export interface RealtimeChannel {
  io: RealtimeIo
  namespace<Path extends RealtimeNamespace>(path: Path): ChannelNamespace<Path>
  /** true from the moment the service starts closing: new connections are refused */
  readonly closing: boolean
  /** counts a message of /ws (Socket.IO's are counted by the engine) */
  count(direction: 'received' | 'sent'): void
  /** each socket's credential, for calls to other services on the user's behalf (session.ts swaps it on refresh) */
  credentials: WeakMap<object, SocketCredential>
  /** every connection's credential, Socket.IO's and /ws': timed, refreshed, ended by revocations and logouts */
  watcher: CredentialWatcher
  eventLimits: EventLimits
  /**
   * A socket recovered after a short disconnection is put back into its rooms only when its user may be in each (a
   * chat room's or a document's member still); otherwise it is not recovered (a new socket, in none of them).
   */
  guardRecovery(mayBeIn: MayBeIn): void
  /** the connections of /ws, for shutdown */
  rawSockets: Set<WebSocket>
  /** distinct users connected to any namespace of any instance (a user who left counts for up to 15 s) */
  activeUsers(): Promise<number>
  /** the /ws connections count too: totalConnections and activeConnections */
  connectionOpened(): void
  connectionClosed(): void
}

/** The server, typed with what every namespace shares (the session's events). */
export type RealtimeIo = Server<SessionClientEvents, SessionServerEvents, InterServerEvents, SocketData>

declare module 'fastify' {
  interface FastifyInstance {
    realtime: RealtimeChannel
  }
}

const namespacePaths = Object.values(realtimePaths.namespaces)

/**
 * WebSocket compression of messages above 1024 bytes (spec: Limits). `ws` applies the threshold only without context
 * takeover; with it, every frame is deflated and each connection keeps a zlib context of its own for its whole life
 * (about 200 KB of memory per socket, measured by bench:realtime).
 */
const perMessageDeflate = {
  threshold: realtimeLimits.compressionThresholdBytes,
  serverNoContextTakeover: true,
  clientNoContextTakeover: true,
}

/** Where the admission of an engine connection (shared by its namespaces) is kept. */
interface Admission {
  address: string
  /** the connection's id in the address's slots */
  connectionId: string
}

/** Whether the service is closing: set by the shutdown, read by the admission and the upgrade dispatcher. */
interface ClosingState {
  closing: boolean
}

/**
 * The channel's server, in named parts: the engine and Socket.IO server (engineAndServer), the counting of engine
 * traffic (countEngineTraffic), the admission of each connection (connectionAdmission), the namespaces' wiring
 * (wireNamespaces), the transports on Fastify (serveTransports) and the graceful shutdown (shutDownGracefully).
 */
async function realtimeServer(app: ServiceApp, options: RealtimeServerOptions): Promise<void> {
  const log: FastifyBaseLogger = app.log
  const state: ClosingState = { closing: false }

  const counters = realtimeCounters(app)
  const { engine, io, guardRecovery } = engineAndServer(options, log)
  countEngineTraffic(engine, counters)

  const credentials = new WeakMap<object, SocketCredential>()
  const presence = activeUsersOf(options.redis, options.redisPrefix)
  app.addHook('onClose', () => presence.close())
  const watcher = credentialWatcher({
    handshake: options.handshake,
    credentials,
    revocations: app.credentialRevocations,
    noticeMs: options.tokenNoticeMs,
    log,
  })
  app.addHook('onClose', async () => watcher.close())
  const { eventLimits } = options
  wireNamespaces(io, {
    admit: connectionAdmission(options.handshake, credentials, state, log),
    onConnection: (socket) => {
      presence.track(socket)
      eventLimits.guard(socket as ChannelSocket<RealtimeNamespace>)
      watcher.watch(socket as ChannelSocket<RealtimeNamespace>)
    },
    log,
  })
  await serveTransports(app, engine, state)

  const rawSockets = new Set<WebSocket>()
  const channel: RealtimeChannel = {
    io,
    namespace: <Path extends RealtimeNamespace>(path: Path) =>
      io.of(path) as unknown as ChannelNamespace<Path>,
    get closing() {
      return state.closing
    },
    count: (direction) => (direction === 'received' ? counters.received.inc() : counters.sent.inc()),
    credentials,
    watcher,
    eventLimits,
    guardRecovery,
    rawSockets,
    activeUsers: presence.count,
    connectionOpened: counters.connectionOpened,
    connectionClosed: counters.connectionClosed,
  }
  app.decorate('realtime', channel)
  shutDownGracefully(app, { io, engine, rawSockets, state, restartNoticeMs: options.restartNoticeMs })
}

/** Counts the engine's connections (opened, closed) and its messages (received, sent) on the channel's counters. */
function countEngineTraffic(engine: Engine, counters: ReturnType<typeof realtimeCounters>): void {
  // one listener of each kind for every connection (not a closure per connection: tens of thousands are held)
  const onPacket = (packet: { type: string }) => {
    if (packet.type === 'message') counters.received.inc()
  }
  const onPacketCreate = (packet: { type: string }) => {
    if (packet.type === 'message') counters.sent.inc()
  }
  engine.on('connection', (connection: EngineSocket) => {
    counters.connectionOpened()
    connection.on('packet', onPacket)
    connection.on('packetCreate', onPacketCreate)
    // on, not once: once wraps each registration in a closure of its own (close comes once anyway)
    connection.on('close', counters.connectionClosed)
  })
}

/**
 * The admission of a socket to a namespace: refused while closing; the engine connection's origin, attempt and
 * concurrent slot once, whatever its namespaces; then the socket's own credential, the namespace's scope, and (for a
 * recovered socket) the same user as before. Sets the socket's data and keeps its credential.
 */
function connectionAdmission(
  handshake: Handshake,
  credentials: WeakMap<object, SocketCredential>,
  state: ClosingState,
  log: FastifyBaseLogger,
): (socket: RealtimeSocket) => Promise<void> {
  // the admission of each engine connection (while it is being decided, its promise; then the admission itself,
  // which the connection keeps for its life)
  const admissions = new WeakMap<EngineSocket, Admission | Promise<Admission>>()
  /** `this` is a closing engine connection whose admission holds a slot: the slot is given back */
  function releaseSlot(this: EngineSocket) {
    const admission = admissions.get(this)
    if (!admission || admission instanceof Promise) return
    handshake.release(admission.address, admission.connectionId).catch((err: unknown) => {
      log.warn({ err }, 'releasing a connection slot failed; its lease expires it')
    })
  }
  const admissionOf = (socket: RealtimeSocket): Admission | Promise<Admission> => {
    let admission = admissions.get(socket.conn)
    if (!admission) {
      admission = (async () => {
        const presented = { request: socket.request }
        handshake.checkOrigin(presented)
        const address = handshake.addressOf(presented)
        await handshake.countAttempt(address)
        // the slot is the connection's, taken once for all its namespaces (a refused connection is closed soon after,
        // which gives it back)
        const admitted = { address, connectionId: randomUUID() }
        await handshake.hold(address, admitted.connectionId)
        admissions.set(socket.conn, admitted)
        socket.conn.on('close', releaseSlot)
        return admitted
      })()
      admissions.set(socket.conn, admission)
    }
    return admission
  }

  return async function admit(socket: RealtimeSocket): Promise<void> {
    if (state.closing) throw new HandshakeRefusal(realtimeMessages.serviceUnavailable, 'SERVICE_UNAVAILABLE')
    const admission = await admissionOf(socket)
    const { user, credential } = await handshake.authenticate({
      request: socket.request,
      authToken: socket.handshake.auth.token,
    })
    // a credential limited to scopes connects only where it holds the namespace's (before any namespace middleware)
    assertNamespaceScope(socket.nsp.name as RealtimeNamespace, user)
    // a recovered socket is back in its user's rooms (user:, notifications:): only that user may have it back
    if (socket.recovered && socket.data?.user?.userId.toLowerCase() !== user.userId.toLowerCase()) {
      throw new HandshakeRefusal(realtimeMessages.invalidToken, 'UNAUTHORIZED')
    }
    socket.data = { user, address: admission.address, connectedAt: new Date().toISOString() }
    credentials.set(socket, credential)
  }
}

/**
 * Every namespace admits its sockets through `admit` (a refusal reaches the client as a connect_error with its data;
 * an unexpected failure is a SERVICE_UNAVAILABLE one), then hands each connected socket to `onConnection`.
 */
function wireNamespaces(
  io: RealtimeIo,
  {
    admit,
    onConnection,
    log,
  }: {
    admit: (socket: RealtimeSocket) => Promise<void>
    onConnection: (socket: RealtimeSocket) => void
    log: FastifyBaseLogger
  },
): void {
  for (const path of namespacePaths) {
    const namespace = io.of(path)
    namespace.use((socket, next) => {
      admit(socket).then(
        () => next(),
        (refusal: unknown) => {
          if (!(refusal instanceof HandshakeRefusal)) log.error({ err: refusal }, 'realtime handshake failed')
          const error =
            refusal instanceof HandshakeRefusal
              ? refusal
              : new HandshakeRefusal(realtimeMessages.serviceUnavailable, 'SERVICE_UNAVAILABLE')
          next(Object.assign(new Error(error.message), { data: error.data }))
          // a connection refused at its first namespace holds nothing worth keeping: let the refusal reach the
          // client, then let go of it (a well-behaved client has closed it by then)
          if (socket.conn.readyState === 'open' && !hasNamespaces(socket)) {
            setTimeout(() => {
              if (!hasNamespaces(socket)) socket.conn.close()
            }, 1000).unref()
          }
        },
      )
    })
    namespace.on('connection', onConnection)
  }
}

/**
 * The transports on the Fastify server: one dispatcher for the server's upgrades (Engine.IO's path to the engine,
 * refused with a 503 while closing; everything else, /ws among it, through Fastify and @fastify/websocket), and the
 * long-polling route, whose body the engine reads itself.
 */
async function serveTransports(app: ServiceApp, engine: Engine, state: ClosingState): Promise<void> {
  const fastifyUpgrades = new EventEmitter()
  await app.register(fastifyWebsocket, {
    // @fastify/websocket listens for upgrades on `server` when given one: here, the dispatcher's second outlet
    options: {
      server: fastifyUpgrades as unknown as HttpServer,
      maxPayload: realtimeLimits.maxMessageBytes,
      perMessageDeflate,
    },
    // the shutdown closes /ws connections after their notice
    preClose: (done) => done(),
  })
  const enginePath = realtimePaths.engine.replace(/\/$/, '')
  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '/').split('?', 1)[0] ?? '/'
    if (path !== enginePath && !path.startsWith(`${enginePath}/`)) {
      fastifyUpgrades.emit('upgrade', request, socket, head)
      return
    }
    if (state.closing) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
      return
    }
    engine.handleUpgrade(request, socket, head)
  })

  // long-polling: the engine reads the body itself, so this route's parsers leave it unread
  await app.register(async (pollingRoutes) => {
    pollingRoutes.removeAllContentTypeParsers()
    pollingRoutes.addContentTypeParser('*', (_request, _payload, done) => done(null))
    pollingRoutes.route({
      method: ['GET', 'POST', 'OPTIONS'],
      url: realtimePaths.engine,
      schema: { hide: true },
      config: { rateLimit: false },
      handler: (request, reply) => {
        reply.hijack()
        engine.handleRequest(request.raw, reply.raw)
      },
    })
  })
}

/**
 * Graceful shutdown (spec: Limits): stop accepting, tell every client, wait, close; runService forces the exit after
 * 30 s.
 */
function shutDownGracefully(
  app: ServiceApp,
  {
    io,
    engine,
    rawSockets,
    state,
    restartNoticeMs,
  }: {
    io: RealtimeIo
    engine: Engine
    rawSockets: Set<WebSocket>
    state: ClosingState
    restartNoticeMs: number
  },
): void {
  app.addHook('preClose', async () => {
    state.closing = true
    const notice = { message: realtimeMessages.restarting }
    for (const path of namespacePaths) io.of(path).local.emit('server:restart', notice)
    for (const socket of rawSockets) socket.send(JSON.stringify({ type: 'server:restart', ...notice }))
    if (io.of('/').sockets.size + rawSockets.size > 0) {
      await new Promise((resolve) => setTimeout(resolve, restartNoticeMs))
    }
    // the transports are closed, not the sockets disconnected: a client sees `transport close` and reconnects (to
    // another instance, where its session recovers from Redis), whereas `io server disconnect` would end it for good
    engine.close()
    // 1012: the server is restarting (RFC 6455 registry)
    for (const socket of rawSockets) socket.close(1012, 'Service restart')
  })
  app.addHook('onClose', async () => {
    await io.close()
  })
}

type RealtimeSocket = Socket<SessionClientEvents, SessionServerEvents, InterServerEvents, SocketData>

/**
 * The Engine.IO server (the spec's limits: heartbeat, message size, compression; the allowed origins) and the Socket.IO
 * server on it, whose namespaces share rooms, broadcasts and recovery sessions through the Redis streams adapter, and
 * recover a session only into rooms its user may still be in (the rule given to `guardRecovery`).
 */
function engineAndServer(options: RealtimeServerOptions, log: FastifyBaseLogger) {
  const engine = new Engine({
    pingInterval: options.pingIntervalMs,
    pingTimeout: options.pingTimeoutMs,
    maxHttpBufferSize: realtimeLimits.maxMessageBytes,
    perMessageDeflate,
    httpCompression: { threshold: realtimeLimits.compressionThresholdBytes },
    // a browser's cross-origin long-polling: exact origins, with credentials (never a wildcard with credentials)
    cors: { origin: [...options.allowedOrigins], methods: ['GET', 'POST'], credentials: true },
  })
  let mayBeIn: MayBeIn | undefined
  const adapterOf = createAdapter(options.adapterRedis, {
    streamName: `${options.redisPrefix}stream`,
    sessionKeyPrefix: `${options.redisPrefix}session:`,
    channelPrefix: `${options.redisPrefix}channel`,
  })
  const io: RealtimeIo = new Server({
    serveClient: false,
    // nesting bounded before a packet is parsed (bounded-parser.ts)
    parser: boundedParser,
    connectTimeout: options.connectTimeoutMs,
    // Socket.IO calls it with `new`: a function, whose returned object is the adapter
    adapter: function guardedAdapter(nsp: unknown) {
      return exactlyOnceRecovery(guardedRecovery(adapterOf(nsp), () => mayBeIn, log))
    } as unknown as ReturnType<typeof createAdapter>,
    // a client that lost its connection for a moment resumes its rooms and gets what it missed; a recovered socket
    // still passes the handshake (its token may have expired meanwhile)
    connectionStateRecovery: { maxDisconnectionDuration: options.recoveryMs, skipMiddlewares: false },
  })
  io.bind(engine)
  return {
    engine,
    io,
    guardRecovery(rule: MayBeIn): void {
      mayBeIn = rule
    },
  }
}

type RecoveredSession = NonNullable<Awaited<ReturnType<RecoverableAdapter['restoreSession']>>>

/**
 * The adapter of a namespace, whose sessions are recovered only into rooms their user may still be in. The adapter
 * gathers a session's missed packets from its rooms without saying which room each came from, so a session with a
 * room it lost is not recovered at all: the client connects as a new socket (`recovered` false, in no room), joins
 * again what it may, and reads what it missed from the history. Nothing of the lost room reaches it.
 */
function guardedRecovery(
  adapter: RecoverableAdapter,
  rule: () => MayBeIn | undefined,
  log: FastifyBaseLogger,
): RecoverableAdapter {
  const restore = adapter.restoreSession.bind(adapter)
  adapter.restoreSession = async (pid, offset) => {
    const session: RecoveredSession | undefined = await restore(pid, offset)
    const mayBeIn = rule()
    if (!session || !mayBeIn) return session as RecoveredSession
    const userId = (session.data as Partial<SocketData> | undefined)?.user?.userId
    if (userId === undefined) return undefined as unknown as RecoveredSession
    try {
      const allowed = await Promise.all(session.rooms.map((room) => mayBeIn(userId, String(room))))
      if (allowed.every(Boolean)) return session
      log.info({ userId }, 'a recovering socket lost a room meanwhile: it connects afresh')
    } catch (error) {
      log.warn(
        { err: error, userId },
        'the rooms of a recovering socket could not be checked: it connects afresh',
      )
    }
    // Socket.IO makes a new socket of a session it cannot restore
    return undefined as unknown as RecoveredSession
  }
  return adapter
}

const hasNamespaces = (socket: RealtimeSocket) =>
  // the engine connection's Socket.IO client and its namespace sockets
  (socket as unknown as { client: { sockets: Map<string, unknown> } }).client.sockets.size > 0

/**
 * The users connected to the channel, across instances: each instance keeps its users in one sorted set, scored by
 * when the entry lapses, and renews them while they stay; so an instance that dies stops counting within the lease.
 */
function activeUsersOf(redis: Redis, prefix: string) {
  const key = `${prefix}active-users`
  const leaseMs = 15_000
  const local = new Map<string, number>()
  const renew = (userIds: string[]) => {
    if (userIds.length === 0) return
    const leaseEnd = Date.now() + leaseMs
    redis.zadd(key, ...userIds.flatMap((userId) => [leaseEnd, userId])).catch(() => {})
  }
  // one listener for every socket; `this` is the socket (the user id does not change over its life)
  function untrack(this: { data: SocketData }) {
    const { userId } = this.data.user
    const left = (local.get(userId) ?? 1) - 1
    if (left > 0) local.set(userId, left)
    else local.delete(userId)
  }
  const timer = setInterval(() => renew([...local.keys()]), leaseMs / 3)
  timer.unref()
  return {
    /** Counts the socket's user; the user stops counting here when their last socket disconnects. */
    track(socket: { data: SocketData; on(event: 'disconnect', listener: () => void): unknown }) {
      const { userId } = socket.data.user
      const sockets = local.get(userId) ?? 0
      local.set(userId, sockets + 1)
      if (sockets === 0) renew([userId])
      socket.on('disconnect', untrack)
    },
    async count(): Promise<number> {
      const [, [, count] = []] =
        (await redis.multi().zremrangebyscore(key, '-inf', Date.now()).zcard(key).exec()) ?? []
      return Number(count ?? 0)
    },
    close: async () => clearInterval(timer),
  }
}

/** The spec's /metrics counters of the channel (connections and messages, not HTTP), and their Prometheus series. */
function realtimeCounters(app: ServiceApp) {
  const registers = [app.metrics.registry]
  const total = new Counter({
    name: 'realtime_connections_total',
    help: 'realtime connections accepted (Socket.IO engine connections and /ws)',
    registers,
  })
  const active = new Gauge({
    name: 'realtime_connections_active',
    help: 'realtime connections open',
    registers,
  })
  const received = new Counter({
    name: 'realtime_messages_received_total',
    help: 'realtime messages received (Socket.IO packets and /ws messages)',
    registers,
  })
  const sent = new Counter({
    name: 'realtime_messages_sent_total',
    help: 'realtime messages sent (Socket.IO packets and /ws messages)',
    registers,
  })
  const value = async (metric: Counter | Gauge) => (await metric.get()).values[0]?.value ?? 0
  app.metrics.counters = async () => ({
    totalConnections: await value(total),
    activeConnections: await value(active),
    messagesReceived: await value(received),
    messagesSent: await value(sent),
  })
  // these are the spec's /metrics counters: they stay what /metrics answers when the request does not choose
  app.metrics.defaultFormat = 'json'
  return {
    received,
    sent,
    connectionOpened: () => {
      total.inc()
      active.inc()
    },
    connectionClosed: () => active.dec(),
  }
}

export const realtimeServerPlugin = fp(realtimeServer, {
  name: 'realtime-server',
  fastify: '5.x',
  dependencies: ['@meridian/service-kit'],
})

export type { RealtimeNamespaces }
