// The realtime channel (spec: Real-time records, Real-time events, Authentication 10–11, Errors rule 6): the payload of
// every event as a TypeBox schema, the event maps of each Socket.IO namespace, and the API scope each namespace and
// event needs, shared by the realtime-gateway (which validates what clients send against these schemas and enforces the
// scopes) and @meridian/realtime-client (which types what it emits and hears). A map's keys are the spec's event names;
// a function with an `ack` parameter expects an acknowledgement.
import { type Static, type TLiteral, Type } from 'typebox'
import type { ApiScope } from './scopes.ts'

/** The Socket.IO engine path and the namespaces (docs/explanation/architecture.md, "The processes"). */
export const realtimePaths = {
  engine: '/socket.io/',
  rawWebSocket: '/ws',
  namespaces: {
    main: '/',
    chat: '/chat',
    notifications: '/notifications',
    collab: '/collab',
    dashboard: '/dashboard',
    admin: '/admin',
  },
} as const

/** The spec's limits of the channel (Limits). */
export const realtimeLimits = {
  pingIntervalMs: 25_000,
  pingTimeoutMs: 20_000,
  connectTimeoutMs: 45_000,
  maxMessageBytes: 1_000_000,
  compressionThresholdBytes: 1024,
  rawPingIntervalMs: 30_000,
  connectionAttempts: 10,
  connectionAttemptsWindowMs: 60_000,
  concurrentConnectionsPerAddress: 5,
  offlineGraceMs: 5 * 60_000,
  tokenExpiringNoticeMs: 60_000,
  chatHistory: 50,
  chatTextMax: 5000,
  shutdownGraceMs: 30_000,
  // Meridian's own abuse limits (the spec shows none); each is configurable in the realtime-gateway (REALTIME_*)
  /** a connection's client events per second (a token bucket: this rate, refilled continuously) */
  eventsPerSecond: 20,
  /** the bucket's size: events a connection may send at once after a quiet moment */
  eventBurst: 40,
  /** a user's client events per window, all their connections on every instance together */
  userEventsPerWindow: 40,
  userEventsWindowMs: 1000,
  /** events refused for rate in a row (the bucket never refilled meanwhile) before the connection is closed */
  refusalsBeforeDisconnect: 20,
  /** rooms one socket may have joined at once (chat rooms, documents, `room:` rooms of the default namespace) */
  roomsPerSocket: 100,
  /** chat messages one user may store per window, across instances */
  chatMessagesPerWindow: 30,
  chatMessagesWindowMs: 10_000,
  /** `message` on the default namespace goes to every socket of every instance: far shorter than a chat message */
  broadcastTextMax: 1000,
  /** the text of one collab:edit insert, in characters (UTF-16 code units): 64 Ki, at most 192 KiB of UTF-8 */
  editTextMax: 65_536,
} as const

/** The handshake failures and refusals, exactly as the spec words them (Authentication 10, Errors 6). */
export const realtimeMessages = {
  authenticationRequired: 'Authentication required',
  invalidToken: 'Invalid or expired token',
  noSession: 'No session',
  invalidSession: 'Invalid session',
  unauthorized: 'Unauthorized',
  originNotAllowed: 'Origin not allowed',
  tooManyAttempts: 'Too many connection attempts. Try again later.',
  serviceUnavailable: 'Service temporarily unavailable',
  invalidMessageFormat: 'Invalid message format',
  notRoomMember: 'Not a member of this room',
  restarting: 'Server restarting; reconnect',
  rateLimited: 'Rate limit exceeded',
  floodDisconnect: 'Rate limit exceeded; disconnected',
} as const

/** The codes of the channel's own refusals (the `error` event's `code`) beside the spec's. */
export const realtimeErrorCodes = {
  /** a join beyond realtimeLimits.roomsPerSocket: nothing is joined */
  roomLimitReached: 'ROOM_LIMIT_REACHED',
} as const

/** The WebSocket close code of a disallowed Origin on /ws. */
export const originNotAllowedCloseCode = 4001
/** /ws: the close code of a connection whose credential no longer counts (expired, revoked, logged out) */
export const credentialFailedCloseCode = 4401
/** /ws: the close code of a connection that kept sending past its rate (RFC 6455: policy violation) */
export const rateLimitedCloseCode = 1008

const Uuid = Type.String({ format: 'uuid', maxLength: 36 })
const Timestamp = Type.String({ format: 'date-time', maxLength: 64 })

/** error — {message}, or {code, message, details} for an invalid payload, or {code: RATE_LIMITED, message, retryAfter}. */
export const RealtimeError = Type.Object({
  message: Type.String(),
  code: Type.Optional(Type.String()),
  retryAfter: Type.Optional(Type.Integer({ minimum: 0, description: 'seconds; RATE_LIMITED' })),
  details: Type.Optional(
    Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
      description: 'each invalid field',
    }),
  ),
})
export type RealtimeError = Static<typeof RealtimeError>

/** What an acknowledgement carries: the answer, or the error of a refused request. */
export type Ack<Data = Record<string, never>> = (
  answer: ({ ok: true } & Data) | { ok: false; error: RealtimeError },
) => void

// default namespace

export const Welcome = Type.Object({
  type: Type.Literal('welcome'),
  message: Type.String(),
  socketId: Type.String(),
})
export type Welcome = Static<typeof Welcome>
export const Echo = Type.Object({ type: Type.Literal('echo'), payload: Type.Unknown() })
export type Echo = Static<typeof Echo>
export const NewMessageIn = Type.Object(
  { text: Type.String({ minLength: 1, maxLength: realtimeLimits.broadcastTextMax }) },
  { additionalProperties: false },
)
export type NewMessageIn = Static<typeof NewMessageIn>
export const NewMessage = Type.Object({
  id: Uuid,
  userId: Type.String(),
  username: Type.String(),
  text: Type.String(),
  createdAt: Timestamp,
})
export type NewMessage = Static<typeof NewMessage>
export const GlobalAlert = Type.Object({ message: Type.String({ minLength: 1, maxLength: 1000 }) })
export type GlobalAlert = Static<typeof GlobalAlert>
export const UserJoined = Type.Object({ userId: Type.String(), room: Type.String() })
export type UserJoined = Static<typeof UserJoined>
export const PrivateIn = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 64, description: 'the socket id' }),
    text: Type.String({ minLength: 1, maxLength: realtimeLimits.chatTextMax }),
  },
  { additionalProperties: false },
)
export type PrivateIn = Static<typeof PrivateIn>
export const PrivateMessage = Type.Object({
  text: Type.String(),
  from: Type.String({ description: 'the sender socket id' }),
  userId: Type.String(),
})
export type PrivateMessage = Static<typeof PrivateMessage>
/** join / leave on the default namespace: a room `room:{name}` of the sockets that joined it. */
export const RoomJoin = Type.Object(
  { room: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' }) },
  { additionalProperties: false },
)
export type RoomJoin = Static<typeof RoomJoin>
export const ServerRestart = Type.Object({ message: Type.String() })
export type ServerRestart = Static<typeof ServerRestart>
export const AuthExpiring = Type.Object({ expiresAt: Type.Integer({ description: 'epoch ms' }) })
export type AuthExpiring = Static<typeof AuthExpiring>
export const AuthRefresh = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 8192 }) },
  { additionalProperties: false },
)
export type AuthRefresh = Static<typeof AuthRefresh>
export const AuthFailed = Type.Object({ message: Type.String() })
export type AuthFailed = Static<typeof AuthFailed>

/** Every namespace's sockets hear these (the token's life is the connection's, whatever the namespace). */
export interface SessionServerEvents {
  'auth:expiring': (notice: AuthExpiring) => void
  'auth:failed': (failure: AuthFailed) => void
  'server:restart': (notice: ServerRestart) => void
  error: (error: RealtimeError) => void
}
export interface SessionClientEvents {
  'auth:refresh': (refresh: AuthRefresh, ack?: Ack<{ expiresAt: number }>) => void
}

export interface MainServerEvents extends SessionServerEvents {
  welcome: (welcome: Welcome) => void
  echo: (echo: Echo) => void
  new_message: (message: NewMessage) => void
  'global-alert': (alert: GlobalAlert) => void
  'user-joined': (joined: UserJoined) => void
  private: (message: PrivateMessage) => void
}
export interface MainClientEvents extends SessionClientEvents {
  echo: (payload: unknown, ack?: Ack<{ echo: Echo }>) => void
  message: (message: NewMessageIn, ack?: Ack<{ message: NewMessage }>) => void
  private: (message: PrivateIn, ack?: Ack) => void
  /** joins `room:{name}`; its other sockets hear user-joined */
  join: (join: RoomJoin, ack?: Ack<{ room: string }>) => void
  leave: (leave: RoomJoin, ack?: Ack<{ room: string }>) => void
}

// /chat

export const ChatJoin = Type.Object({ roomId: Uuid }, { additionalProperties: false })
export type ChatJoin = Static<typeof ChatJoin>
export const ChatMessageIn = Type.Object(
  { roomId: Uuid, text: Type.String({ minLength: 1, maxLength: realtimeLimits.chatTextMax }) },
  { additionalProperties: false },
)
export type ChatMessageIn = Static<typeof ChatMessageIn>
export const ChatMessage = Type.Object({
  id: Uuid,
  roomId: Uuid,
  userId: Type.String(),
  username: Type.String(),
  text: Type.String(),
  createdAt: Timestamp,
})
export type ChatMessage = Static<typeof ChatMessage>
export const ChatHistory = Type.Object({ roomId: Uuid, messages: Type.Array(ChatMessage) })
export type ChatHistory = Static<typeof ChatHistory>
export const ChatTypingIn = Type.Object(
  { roomId: Uuid, isTyping: Type.Boolean() },
  { additionalProperties: false },
)
export type ChatTypingIn = Static<typeof ChatTypingIn>
export const ChatTyping = Type.Object({
  roomId: Uuid,
  userId: Type.String(),
  username: Type.String(),
  isTyping: Type.Boolean(),
})
export type ChatTyping = Static<typeof ChatTyping>
export const ChatPresence = Type.Object({ roomId: Uuid, userId: Type.String(), username: Type.String() })
export type ChatPresence = Static<typeof ChatPresence>
export const ChatLeave = ChatJoin

export interface ChatServerEvents extends SessionServerEvents {
  'chat:history': (history: ChatHistory) => void
  'chat:message': (message: ChatMessage) => void
  'chat:typing': (typing: ChatTyping) => void
  'chat:user-joined': (user: ChatPresence) => void
  'chat:user-left': (user: ChatPresence) => void
}
export interface ChatClientEvents extends SessionClientEvents {
  'chat:join': (join: ChatJoin, ack?: Ack<{ history: ChatHistory; online: ChatPresence[] }>) => void
  'chat:leave': (leave: ChatJoin, ack?: Ack) => void
  'chat:message': (message: ChatMessageIn, ack?: Ack<{ message: ChatMessage }>) => void
  'chat:typing': (typing: ChatTypingIn) => void
}

// /notifications

/** A notification as the realtime channel carries it (spec: Real-time records). */
export const RealtimeNotification = Type.Object({
  id: Type.String(),
  type: Type.String(),
  title: Type.String(),
  message: Type.String(),
  createdAt: Timestamp,
})
export type RealtimeNotification = Static<typeof RealtimeNotification>
export const NotificationsRead = Type.Object(
  { notificationIds: Type.Array(Uuid, { minItems: 1, maxItems: 100, uniqueItems: true }) },
  { additionalProperties: false },
)
export type NotificationsRead = Static<typeof NotificationsRead>

export interface NotificationsServerEvents extends SessionServerEvents {
  'notifications:list': (unread: RealtimeNotification[]) => void
  'notification:new': (notification: RealtimeNotification) => void
}
export interface NotificationsClientEvents extends SessionClientEvents {
  'notifications:fetch': (ack?: Ack<{ notifications: RealtimeNotification[] }>) => void
  /** acknowledged with the spec's {success: true} (and the ids read) */
  'notifications:read': (read: NotificationsRead, ack?: Ack<{ success: true; read: string[] }>) => void
}

// /collab

export const EditOperation = Type.Union([
  Type.Object(
    {
      type: Type.Literal('insert'),
      position: Type.Integer({ minimum: 0 }),
      text: Type.String({ minLength: 1, maxLength: realtimeLimits.editTextMax }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('delete'),
      position: Type.Integer({ minimum: 0 }),
      length: Type.Integer({ minimum: 1 }),
    },
    { additionalProperties: false },
  ),
])
export type EditOperation = Static<typeof EditOperation>
export const CollabJoin = Type.Object({ docId: Uuid }, { additionalProperties: false })
export type CollabJoin = Static<typeof CollabJoin>
export const CollabDocumentState = Type.Object({
  docId: Uuid,
  content: Type.String(),
  version: Type.Integer({ minimum: 0 }),
})
export type CollabDocumentState = Static<typeof CollabDocumentState>
export const CollabUser = Type.Object({ id: Type.String(), username: Type.String() })
export type CollabUser = Static<typeof CollabUser>
export const CollabEdit = Type.Object(
  { docId: Uuid, operation: EditOperation, baseVersion: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
)
export type CollabEdit = Static<typeof CollabEdit>
export const CollabConflict = Type.Object({
  docId: Uuid,
  serverVersion: Type.Integer(),
  serverContent: Type.String(),
})
export type CollabConflict = Static<typeof CollabConflict>
export const CollabRemoteEdit = Type.Object({
  docId: Uuid,
  userId: Type.String(),
  username: Type.String(),
  operation: EditOperation,
  newVersion: Type.Integer({ minimum: 1 }),
})
export type CollabRemoteEdit = Static<typeof CollabRemoteEdit>

export interface CollabServerEvents extends SessionServerEvents {
  'collab:init': (state: CollabDocumentState) => void
  'collab:users': (users: CollabUser[]) => void
  'collab:conflict': (conflict: CollabConflict) => void
  'collab:remote-edit': (edit: CollabRemoteEdit) => void
}
export interface CollabClientEvents extends SessionClientEvents {
  'collab:join': (join: CollabJoin, ack?: Ack<{ state: CollabDocumentState }>) => void
  'collab:leave': (leave: CollabJoin, ack?: Ack) => void
  'collab:edit': (edit: CollabEdit, ack?: Ack<{ version: number }>) => void
}

// /dashboard

export const dashboardMetricNames = ['activeUsers', 'requestsPerSecond', 'errorRate', 'p95Latency'] as const
export type DashboardMetricName = (typeof dashboardMetricNames)[number]
export const DashboardMetrics = Type.Object({
  activeUsers: Type.Optional(
    Type.Integer({ minimum: 0, description: 'distinct users connected to the channel' }),
  ),
  requestsPerSecond: Type.Optional(
    Type.Number({
      minimum: 0,
      description: 'HTTP requests per second, all services, since the previous update',
    }),
  ),
  errorRate: Type.Optional(
    Type.Number({ minimum: 0, maximum: 1, description: 'share of 5xx answers since the previous update' }),
  ),
  p95Latency: Type.Optional(
    Type.Number({ minimum: 0, description: 'milliseconds, all services, since the previous update' }),
  ),
  timestamp: Type.Integer({ description: 'epoch ms' }),
})
export type DashboardMetrics = Static<typeof DashboardMetrics>
/** One literal schema per name, as a tuple (a plain array's union has the Static never: no name would type-check). */
type LiteralsOf<Names extends readonly string[]> = {
  -readonly [Index in keyof Names]: TLiteral<Names[Index]>
}
const dashboardMetricLiterals = dashboardMetricNames.map((name) => Type.Literal(name)) as LiteralsOf<
  typeof dashboardMetricNames
>
export const DashboardSubscribe = Type.Object(
  {
    metrics: Type.Array(Type.Union(dashboardMetricLiterals), {
      minItems: 1,
      // every name at most once: a bound that keeps the uniqueness check small
      maxItems: dashboardMetricNames.length,
      uniqueItems: true,
    }),
  },
  { additionalProperties: false },
)
export type DashboardSubscribe = Static<typeof DashboardSubscribe>

export interface DashboardServerEvents extends SessionServerEvents {
  'metrics:snapshot': (metrics: DashboardMetrics) => void
  'metrics:update': (metrics: DashboardMetrics) => void
}
export interface DashboardClientEvents extends SessionClientEvents {
  'dashboard:subscribe': (
    subscribe: DashboardSubscribe,
    ack?: Ack<{ metrics: DashboardMetricName[] }>,
  ) => void
}

// /admin

export const AdminConnection = Type.Object({
  socketId: Type.String(),
  userId: Type.String(),
  username: Type.String(),
  role: Type.String(),
  address: Type.String(),
  namespace: Type.String(),
  connectedAt: Timestamp,
})
export type AdminConnection = Static<typeof AdminConnection>
export const AdminDisconnect = Type.Object(
  { socketId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
)
export type AdminDisconnect = Static<typeof AdminDisconnect>

export interface AdminServerEvents extends SessionServerEvents {}
export interface AdminClientEvents extends SessionClientEvents {
  'admin:connections': (ack: Ack<{ connections: AdminConnection[] }>) => void
  'admin:disconnect': (target: AdminDisconnect, ack?: Ack<{ disconnected: number }>) => void
  'admin:global-alert': (alert: GlobalAlert, ack?: Ack) => void
}

/** Every namespace's event maps, by namespace path: what the SDK and the server type their sockets with. */
export interface RealtimeNamespaces {
  '/': { server: MainServerEvents; client: MainClientEvents }
  '/chat': { server: ChatServerEvents; client: ChatClientEvents }
  '/notifications': { server: NotificationsServerEvents; client: NotificationsClientEvents }
  '/collab': { server: CollabServerEvents; client: CollabClientEvents }
  '/dashboard': { server: DashboardServerEvents; client: DashboardClientEvents }
  '/admin': { server: AdminServerEvents; client: AdminClientEvents }
}
export type RealtimeNamespace = keyof RealtimeNamespaces

/** The events of a namespace's clients beside those every namespace shares (SessionClientEvents). */
export type NamespaceClientEvent<Path extends RealtimeNamespace> = Exclude<
  keyof RealtimeNamespaces[Path]['client'],
  keyof SessionClientEvents
> &
  string

/** What a namespace needs of a credential limited to scopes: to connect, and for each event its clients send. */
export interface NamespaceScopes<Path extends RealtimeNamespace> {
  connect: ApiScope | null
  events: { readonly [Event in NamespaceClientEvent<Path>]: ApiScope | null }
}

/**
 * The scopes of the realtime channel (docs/explanation/security.md: API scopes), for credentials limited to scopes (the OpenID provider's
 * access tokens; the channel takes no API keys): a namespace's `connect` scope is checked at the handshake and again
 * when `auth:refresh` brings another token, an event's before its payload is read. `null`: nothing beyond being
 * connected. First-party credentials (POST /login's tokens, cookie sessions) carry no scopes and are not limited.
 *
 * A namespace is connected to with the scope of reading what it carries to its sockets: the default namespace's
 * `new_message`, `private` and `user-joined` are what other users say, so it needs `chat:read` like /chat. Leaving a
 * room, and echo, change and reveal nothing.
 */
export const realtimeScopes: {
  readonly namespaces: { readonly [Path in RealtimeNamespace]: NamespaceScopes<Path> }
  readonly session: { readonly [Event in keyof SessionClientEvents]: ApiScope | null }
  /** /ws answers a client with its own messages (echo) and its credential's life: it reads and changes nothing */
  readonly rawWebSocket: { readonly connect: null; readonly message: null }
} = {
  namespaces: {
    '/': {
      connect: 'chat:read',
      events: { echo: null, join: 'chat:read', leave: null, message: 'chat:write', private: 'chat:write' },
    },
    '/chat': {
      connect: 'chat:read',
      events: {
        'chat:join': 'chat:read',
        'chat:leave': null,
        'chat:message': 'chat:write',
        'chat:typing': 'chat:write',
      },
    },
    '/notifications': {
      connect: 'notifications:read',
      events: { 'notifications:fetch': 'notifications:read', 'notifications:read': 'notifications:write' },
    },
    '/collab': {
      connect: 'documents:read',
      events: { 'collab:join': 'documents:read', 'collab:leave': null, 'collab:edit': 'documents:write' },
    },
    '/dashboard': { connect: 'admin:read', events: { 'dashboard:subscribe': 'admin:read' } },
    '/admin': {
      connect: 'admin:read',
      events: {
        'admin:connections': 'admin:read',
        'admin:disconnect': 'admin:write',
        'admin:global-alert': 'admin:write',
      },
    },
  },
  // a refresh is the credential itself: the namespace's connect scope is checked against the new token
  session: { 'auth:refresh': null },
  rawWebSocket: { connect: null, message: null },
}

/** A connection refused, or ended at a refresh, for a scope its namespace needs (connect_error, auth:failed). */
export const namespaceScopeMessage = (scope: ApiScope) => `Insufficient scope: this namespace needs ${scope}`
