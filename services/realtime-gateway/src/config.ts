// The realtime-gateway service's environment: its own stores, the origins browsers may connect from, the channel's
// limits (spec: Limits, and Meridian's own abuse limits: event rates, rooms, chat messages) and its timings.
import { realtimeLimits, redisPrefixDefaults, redisPrefixPattern } from '@meridian/contracts'
import { exactOrigins, loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

const ms = (minimum: number, fallback: number, description: string) =>
  Type.Integer({ minimum, maximum: 3_600_000, default: fallback, description })
const count = (fallback: number, description: string) =>
  Type.Integer({ minimum: 1, maximum: 1_000_000, default: fallback, description })

export const RealtimeGatewayEnv = serviceEnv({
  ...ownStoresEnv({ port: 3007, database: 'realtime' }),
  REALTIME_ALLOWED_ORIGINS: Type.String({
    default: 'http://localhost:8080,http://127.0.0.1:8080',
    description:
      'comma-separated exact origins (scheme://host[:port]) a browser may connect from; never a wildcard (credentials are allowed)',
  }),
  REALTIME_REDIS_PREFIX: Type.String({
    default: redisPrefixDefaults.realtime,
    pattern: redisPrefixPattern,
    maxLength: 64,
    description:
      'prefix of every Redis key and stream of the channel (adapter stream, sessions, limits, presence); instances that share one channel share it',
  }),
  REALTIME_CONNECTION_ATTEMPTS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: realtimeLimits.connectionAttempts,
    description: 'connection attempts per address per window; the next one is refused',
  }),
  REALTIME_ATTEMPTS_WINDOW_MS: ms(1000, realtimeLimits.connectionAttemptsWindowMs, 'the attempts window'),
  REALTIME_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: realtimeLimits.concurrentConnectionsPerAddress,
    description: 'connections one address may hold at once, across every instance (Socket.IO and /ws)',
  }),
  REALTIME_PING_INTERVAL_MS: ms(100, realtimeLimits.pingIntervalMs, 'Socket.IO heartbeat interval'),
  REALTIME_PING_TIMEOUT_MS: ms(100, realtimeLimits.pingTimeoutMs, 'Socket.IO heartbeat timeout'),
  REALTIME_CONNECT_TIMEOUT_MS: ms(100, realtimeLimits.connectTimeoutMs, 'time to join a namespace'),
  RAW_WS_PING_INTERVAL_MS: ms(
    50,
    realtimeLimits.rawPingIntervalMs,
    '/ws: a ping every interval; a socket that did not answer the previous one is terminated',
  ),
  REALTIME_TOKEN_NOTICE_MS: ms(
    1000,
    realtimeLimits.tokenExpiringNoticeMs,
    'auth:expiring is sent this long before the token expires',
  ),
  REALTIME_RESTART_NOTICE_MS: ms(
    0,
    1000,
    'on shutdown: time between server:restart and closing the connections (the clients reconnect elsewhere)',
  ),
  REALTIME_OFFLINE_GRACE_MS: ms(
    100,
    realtimeLimits.offlineGraceMs,
    'how long a disconnected user stays present in chat rooms before chat:user-left',
  ),
  REALTIME_RECOVERY_MS: ms(
    0,
    120_000,
    'connection-state recovery: how long a disconnected client may resume with its missed packets',
  ),
  REALTIME_EVENTS_PER_SECOND: count(
    realtimeLimits.eventsPerSecond,
    'client events per second of one connection (a token bucket; Socket.IO namespaces of one connection share it; /ws messages too)',
  ),
  REALTIME_EVENT_BURST: count(
    realtimeLimits.eventBurst,
    "the connection's bucket: events it may send at once after a quiet moment",
  ),
  REALTIME_USER_EVENTS_PER_WINDOW: count(
    realtimeLimits.userEventsPerWindow,
    'client events of one user per window, all their connections on every instance together',
  ),
  REALTIME_USER_EVENTS_WINDOW_MS: ms(100, realtimeLimits.userEventsWindowMs, "the users' events window"),
  REALTIME_REFUSALS_BEFORE_DISCONNECT: count(
    realtimeLimits.refusalsBeforeDisconnect,
    'events refused for rate before the connection is closed (forgiven once its bucket has filled again)',
  ),
  REALTIME_MAX_ROOMS_PER_SOCKET: count(
    realtimeLimits.roomsPerSocket,
    'chat rooms, documents or room: rooms one socket may be in at once; a join beyond is refused (ROOM_LIMIT_REACHED)',
  ),
  REALTIME_CHAT_MESSAGES_PER_WINDOW: count(
    realtimeLimits.chatMessagesPerWindow,
    'chat messages one user may store per window, across instances',
  ),
  REALTIME_CHAT_MESSAGES_WINDOW_MS: ms(1000, realtimeLimits.chatMessagesWindowMs, 'the chat messages window'),
  REALTIME_LIMITS_SYNC_MS: ms(
    10,
    100,
    "how often each instance settles the users' counts with Redis: the instances agree within this interval",
  ),
  DASHBOARD_INTERVAL_MS: ms(100, 1000, 'metrics:update interval of /dashboard'),
  DASHBOARD_SERVICES: Type.String({
    default: '',
    description:
      "comma-separated Consul names of the services /dashboard sums up; empty: every service of Consul's catalogue",
  }),
  GATEWAY_SERVICE_NAME: Type.String({
    minLength: 1,
    default: 'gateway',
    description:
      "the public gateway in Consul: while it has healthy instances, /dashboard's requests, errors and latency are its own, so that a request it proxies is not counted again at the service behind it",
  }),
  NOTIFICATION_SERVICE_NAME: Type.String({
    minLength: 1,
    default: 'notification',
    description: 'the notification service in Consul (what /notifications reads and marks)',
  }),
  NOTIFICATION_DISCOVERY_WAIT_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 3000 }),
})
export type RealtimeGatewayConfig = Static<typeof RealtimeGatewayEnv>

/** The allowed origins, checked: exact origins only. */
export const allowedOriginsOf = (config: Pick<RealtimeGatewayConfig, 'REALTIME_ALLOWED_ORIGINS'>): string[] =>
  exactOrigins('REALTIME_ALLOWED_ORIGINS', config.REALTIME_ALLOWED_ORIGINS)

export function loadRealtimeGatewayConfig(env: NodeJS.ProcessEnv = process.env): RealtimeGatewayConfig {
  const config = loadConfig(RealtimeGatewayEnv, env)
  allowedOriginsOf(config)
  return config
}
