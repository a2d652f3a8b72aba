// The realtime-gateway service as a Fastify app: the chassis with its database, Redis and authentication; the
// realtime channel on its server (channels/realtime-server.ts: Socket.IO at /socket.io/ with the spec's namespaces,
// and /ws), chat rooms and collaborative documents with their REST resources (routes/, domain/, data/), the
// notifications pushed from notification.created (events/) and read through the notification service (clients/),
// and the live dashboard of every service found in Consul. Never listens; main.ts and tests build it.
import { ErrorCode } from '@meridian/contracts'
import { type Sql, tracedRepository } from '@meridian/db'
import { type AnyServiceConsumer, registerServiceEvents, type WithServiceEvents } from '@meridian/events'
import {
  consulOptionsFromEnv,
  createDiscoveredUpstream,
  createServiceApp,
  listOf,
  registerAuditTrail,
  registerVersionedApi,
  type ServiceApp,
  type ServiceClient,
  type ServiceDependencies,
  serviceAppOptions,
} from '@meridian/service-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { adminChannel } from './channels/admin.ts'
import { chatChannel } from './channels/chat.ts'
import { collabChannel } from './channels/collab.ts'
import { dashboardChannel } from './channels/dashboard.ts'
import { EventLimits } from './channels/event-limits.ts'
import { createHandshake } from './channels/handshake.ts'
import { mainChannel } from './channels/main.ts'
import { notificationsChannel } from './channels/notifications.ts'
import { rawWebSocketRoutes } from './channels/raw-websocket.ts'
import { realtimeServerPlugin } from './channels/realtime-server.ts'
import { createRoomAccess } from './channels/room-access.ts'
import { createNotificationsClient } from './clients/notifications.ts'
import { createServiceMetricsSource } from './clients/service-metrics.ts'
import { allowedOriginsOf, type RealtimeGatewayConfig } from './config.ts'
import { createChatRepository } from './data/chat-repository.ts'
import { createConnectionLimits } from './data/connection-limits.ts'
import { createDocumentsRepository } from './data/documents-repository.ts'
import { createPresenceStore } from './data/presence-store.ts'
import { createUserRate } from './data/user-rates.ts'
import { channelRoomRule } from './domain/channel-rooms.ts'
import { type ChatUseCases, chatRoomChannel, createChatUseCases } from './domain/chat.ts'
import { createDocumentUseCases, type DocumentUseCases, documentChannel } from './domain/documents.ts'
import { type RealtimeGatewayEventType, realtimeGatewayConsumers } from './events/consumers.ts'
import { chatRoomsGuards } from './routes/chat-rooms/access.ts'
import { chatRoomsRoutes } from './routes/chat-rooms/index.ts'
import { documentsGuards } from './routes/documents/access.ts'
import { documentsRoutes } from './routes/documents/index.ts'

export const serviceName = 'realtime-gateway'

export type RealtimeGatewayDependencies = ServiceDependencies<RealtimeGatewayConfig, Sql> &
  WithServiceEvents<RealtimeGatewayEventType>

/** The app, its consumers (run by its event backbone when asked for) and the clients runService closes. */
export interface RealtimeGatewayService {
  app: ServiceApp
  /** notification.created → notification:new */
  consumers: AnyServiceConsumer[]
  /** closed by runService after the app: the notification client's connections and its Consul watch */
  clients: ServiceClient[]
  chat: ChatUseCases
  documents: DocumentUseCases
}

export async function buildApp(dependencies: RealtimeGatewayDependencies): Promise<RealtimeGatewayService> {
  const { config, sql, redis } = dependencies
  const app = await createServiceApp(
    serviceAppOptions(dependencies, {
      name: serviceName,
      description:
        'The realtime channel: Socket.IO namespaces, raw WebSocket, chat rooms, collaborative documents, live dashboard',
    }),
  )
  const consul = consulOptionsFromEnv(config)
  const prefix = config.REALTIME_REDIS_PREFIX

  // the channel's limits count across instances in Redis
  const limits = createConnectionLimits({
    redis,
    prefix,
    attempts: config.REALTIME_CONNECTION_ATTEMPTS,
    attemptsWindowMs: config.REALTIME_ATTEMPTS_WINDOW_MS,
    maxConnections: config.REALTIME_MAX_CONNECTIONS_PER_ADDRESS,
  })
  const allowedOrigins = allowedOriginsOf(config)
  const handshake = createHandshake({
    verifyCredential: app.verifyCredential,
    limits,
    allowedOrigins,
    trustedProxies: config.TRUSTED_PROXIES,
    log: app.log,
  })
  // how fast clients may send: each connection's bucket here, each user's count across instances in Redis
  const userRate = (what: string, limit: number, windowMs: number) =>
    createUserRate({
      redis,
      keyPrefix: `${prefix}${what}:`,
      limit,
      windowMs,
      syncIntervalMs: config.REALTIME_LIMITS_SYNC_MS,
      log: app.log,
    })
  const eventLimits = new EventLimits({
    ratePerSecond: config.REALTIME_EVENTS_PER_SECOND,
    burst: config.REALTIME_EVENT_BURST,
    refusalsBeforeDisconnect: config.REALTIME_REFUSALS_BEFORE_DISCONNECT,
    userEvents: userRate(
      'user-events',
      config.REALTIME_USER_EVENTS_PER_WINDOW,
      config.REALTIME_USER_EVENTS_WINDOW_MS,
    ),
  })
  // the adapter blocks on XREAD: a connection of its own
  const adapterRedis = redis.duplicate({ connectionName: `${serviceName}-adapter` })
  // its errors (an XADD cut short while the app closes) are logged, not left to ioredis' unhandled-error warning
  adapterRedis.on('error', (err: unknown) => app.log.warn({ err }, 'realtime adapter: Redis error'))
  observePublishes(adapterRedis, app.log)
  observeSubscriptions(adapterRedis, app.log)
  app.addHook('onClose', async () => {
    limits.close()
    await adapterRedis.quit().catch(() => adapterRedis.disconnect())
  })
  await app.register(realtimeServerPlugin, {
    handshake,
    redis,
    adapterRedis,
    redisPrefix: prefix,
    allowedOrigins,
    pingIntervalMs: config.REALTIME_PING_INTERVAL_MS,
    pingTimeoutMs: config.REALTIME_PING_TIMEOUT_MS,
    connectTimeoutMs: config.REALTIME_CONNECT_TIMEOUT_MS,
    recoveryMs: config.REALTIME_RECOVERY_MS,
    tokenNoticeMs: config.REALTIME_TOKEN_NOTICE_MS,
    restartNoticeMs: config.REALTIME_RESTART_NOTICE_MS,
    eventLimits,
  })
  const { realtime } = app
  await app.register(rawWebSocketRoutes, {
    handshake,
    realtime,
    pingIntervalMs: config.RAW_WS_PING_INTERVAL_MS,
  })

  // channels and resources: the use cases tell the channel of lost memberships (the sockets leave those rooms on every
  // instance), and a recovered socket is put back only into rooms it may still be in
  const rooms = createRoomAccess(realtime, app.log)
  const chat = createChatUseCases({
    chat: tracedRepository('chat', createChatRepository(sql)),
    sql,
    access: rooms.of('/chat', chatRoomChannel),
  })
  const documents = createDocumentUseCases({
    documents: tracedRepository('documents', createDocumentsRepository(sql)),
    sql,
    access: rooms.of('/collab', documentChannel),
  })
  realtime.guardRecovery(channelRoomRule({ chat, documents }))
  const maxRooms = config.REALTIME_MAX_ROOMS_PER_SOCKET
  const notificationService = createDiscoveredUpstream({
    consul,
    name: 'notification',
    serviceName: config.NOTIFICATION_SERVICE_NAME,
    logger: app.log,
    discoveryWaitMs: config.NOTIFICATION_DISCOVERY_WAIT_MS,
    // the upstream client's default code is payment's (PAYMENT_SERVICE_ERROR)
    errorCode: ErrorCode.BAD_GATEWAY,
    serviceCredential: config.SERVICE_CREDENTIAL,
  })
  const dashboardServices = listOf(config.DASHBOARD_SERVICES)

  mainChannel(realtime.namespace('/'), { maxRooms, log: app.log })
  adminChannel(realtime.namespace('/admin'), { realtime, log: app.log })
  const chatting = chatChannel(realtime.namespace('/chat'), {
    chat,
    presence: createPresenceStore({ redis, prefix, graceMs: config.REALTIME_OFFLINE_GRACE_MS }),
    messageRate: userRate(
      'chat-messages',
      config.REALTIME_CHAT_MESSAGES_PER_WINDOW,
      config.REALTIME_CHAT_MESSAGES_WINDOW_MS,
    ),
    maxRooms,
    rooms,
    log: app.log,
  })
  collabChannel(realtime.namespace('/collab'), { documents, maxRooms, rooms, log: app.log })
  notificationsChannel(realtime.namespace('/notifications'), {
    notifications: createNotificationsClient(notificationService),
    credentials: realtime.credentials,
    log: app.log,
  })
  const dashboard = dashboardChannel(realtime.namespace('/dashboard'), {
    source: createServiceMetricsSource({
      consul,
      ...(dashboardServices.length > 0 ? { services: () => dashboardServices } : {}),
      edgeService: config.GATEWAY_SERVICE_NAME,
      timeoutMs: Math.min(800, Math.max(100, config.DASHBOARD_INTERVAL_MS - 100)),
      log: app.log,
    }),
    activeUsers: () => realtime.activeUsers(),
    intervalMs: config.DASHBOARD_INTERVAL_MS,
    log: app.log,
  })
  app.addHook('preClose', async () => {
    await Promise.all([chatting.close(), dashboard.close()])
  })

  // its audit trail, for admins at /api/v1/admin/audit/<service> (service-kit's audit/)
  await registerAuditTrail(app, { sql, service: serviceName })
  await registerVersionedApi(app, chatRoomsRoutes, { chat, guards: chatRoomsGuards(app) })
  await registerVersionedApi(app, documentsRoutes, { documents, guards: documentsGuards(app) })

  const consumers = await registerServiceEvents(app, {
    ...dependencies,
    service: serviceName,
    consumers: (options) => realtimeGatewayConsumers(realtime.namespace('/notifications'), options),
  })
  return {
    app,
    consumers,
    clients: notificationService.clients,
    chat,
    documents,
  }
}

/**
 * The streams adapter sends its ephemeral messages (fetchSockets' requests, as collab:users' list makes) with PUBLISH,
 * and subscribes each namespace's channels on a client it duplicates from this one, and drops both promises: one
 * refused (Redis closed while the app closes, or down past its retries) would be an unhandled rejection, which ends
 * the process; an app closed before a SUBSCRIBE was answered (an instance stopped a moment after it started) left one
 * per namespace ("Connection is closed.", CI run F4 of 2026-12-02). Each failure is observed here (logged) and still
 * reaches a caller that awaits it.
 */
export function observeSubscriptions(redis: Redis, log: FastifyBaseLogger): void {
  const duplicate = redis.duplicate.bind(redis)
  redis.duplicate = ((...args: Parameters<Redis['duplicate']>): Redis => {
    const client = duplicate(...args)
    observeCommand(client, 'subscribe', log, 'a subscription was not made')
    return client
  }) as Redis['duplicate']
}

/** The same for PUBLISH on the adapter's own client (observeSubscriptions). */
function observePublishes(redis: Redis, log: FastifyBaseLogger): void {
  observeCommand(redis, 'publish', log, 'a publish failed')
}

/** Replaces `client[command]` by one that logs its refusal at debug and returns the same promise. */
function observeCommand(
  client: Redis,
  command: 'publish' | 'subscribe',
  log: FastifyBaseLogger,
  failure: string,
): void {
  const send = (client[command] as (...args: unknown[]) => Promise<unknown>).bind(client)
  const observed = (...args: unknown[]): Promise<unknown> => {
    const sent = send(...args)
    sent.catch((err: unknown) => log.debug({ err }, `realtime adapter: ${failure}`))
    return sent
  }
  ;(client as unknown as Record<string, unknown>)[command] = observed
}
