// The realtime channel in the AsyncAPI document (asyncapi.ts): each Socket.IO namespace as a channel whose messages are
// its events (a message's `name` is the Socket.IO event name), each acknowledgement as the reply of its client event,
// and /ws as a channel of JSON messages told apart by `type`.
import { type TProperties, type TSchema, Type } from 'typebox'
import {
  AdminConnection,
  AdminDisconnect,
  AuthExpiring,
  AuthFailed,
  AuthRefresh,
  ChatHistory,
  ChatJoin,
  ChatMessage,
  ChatMessageIn,
  ChatPresence,
  ChatTyping,
  ChatTypingIn,
  CollabConflict,
  CollabDocumentState,
  CollabEdit,
  CollabJoin,
  CollabRemoteEdit,
  CollabUser,
  DashboardMetrics,
  DashboardSubscribe,
  dashboardMetricNames,
  Echo,
  GlobalAlert,
  type NamespaceClientEvent,
  NewMessage,
  NewMessageIn,
  NotificationsRead,
  PrivateIn,
  PrivateMessage,
  RealtimeError,
  type RealtimeNamespace,
  type RealtimeNamespaces,
  RealtimeNotification,
  RoomJoin,
  realtimePaths,
  ServerRestart,
  type SessionClientEvents,
  type SessionServerEvents,
  UserJoined,
  Welcome,
} from './realtime.ts'

/** A client event: its payload (none: the event carries only its acknowledgement) and its ack's answer when it has one. */
interface ClientEventDoc {
  payload?: TSchema
  /** what `{ok: true, ...}` carries beside `ok`; absent: the event is not acknowledged */
  ack?: TProperties
  description?: string
}

type ServerEventsOf<Path extends RealtimeNamespace> = Exclude<
  keyof RealtimeNamespaces[Path]['server'],
  keyof SessionServerEvents
> &
  string

/** Every namespace's own events (typed over the namespaces' event maps, so none is left out). */
const namespaceEvents: {
  readonly [Path in RealtimeNamespace]: {
    description: string
    server: { readonly [Event in ServerEventsOf<Path>]: TSchema }
    client: { readonly [Event in NamespaceClientEvent<Path>]: ClientEventDoc }
  }
} = {
  '/': {
    description:
      'The default namespace: a welcome, echo, broadcast messages, private messages and `room:` rooms.',
    server: {
      welcome: Welcome,
      echo: Echo,
      new_message: NewMessage,
      'global-alert': GlobalAlert,
      'user-joined': UserJoined,
      private: PrivateMessage,
    },
    client: {
      echo: { payload: Type.Unknown(), ack: { echo: Echo }, description: 'answered with `echo`' },
      message: {
        payload: NewMessageIn,
        ack: { message: NewMessage },
        description: 'broadcast to every socket as `new_message`',
      },
      private: { payload: PrivateIn, ack: {}, description: 'sent to one socket as `private`' },
      join: {
        payload: RoomJoin,
        ack: { room: Type.String() },
        description: "joins `room:{room}`; the room's other sockets hear `user-joined`",
      },
      leave: { payload: RoomJoin, ack: { room: Type.String() } },
    },
  },
  '/chat': {
    description: 'Chat rooms (created with POST /api/v1/chat/rooms): history, messages, typing and presence.',
    server: {
      'chat:history': ChatHistory,
      'chat:message': ChatMessage,
      'chat:typing': ChatTyping,
      'chat:user-joined': ChatPresence,
      'chat:user-left': ChatPresence,
    },
    client: {
      'chat:join': { payload: ChatJoin, ack: { history: ChatHistory, online: Type.Array(ChatPresence) } },
      'chat:leave': { payload: ChatJoin, ack: {} },
      'chat:message': { payload: ChatMessageIn, ack: { message: ChatMessage } },
      'chat:typing': { payload: ChatTypingIn },
    },
  },
  '/notifications': {
    description:
      "The user's notifications: the unread ones on connecting, then each new one as it is created.",
    server: {
      'notifications:list': Type.Array(RealtimeNotification),
      'notification:new': RealtimeNotification,
    },
    client: {
      'notifications:fetch': { ack: { notifications: Type.Array(RealtimeNotification) } },
      'notifications:read': {
        payload: NotificationsRead,
        ack: { success: Type.Literal(true), read: Type.Array(Type.String()) },
      },
    },
  },
  '/collab': {
    description: 'Collaborative documents: operations against a version, transformed by the server (OT).',
    server: {
      'collab:init': CollabDocumentState,
      'collab:users': Type.Array(CollabUser),
      'collab:conflict': CollabConflict,
      'collab:remote-edit': CollabRemoteEdit,
    },
    client: {
      'collab:join': { payload: CollabJoin, ack: { state: CollabDocumentState } },
      'collab:leave': { payload: CollabJoin, ack: {} },
      'collab:edit': { payload: CollabEdit, ack: { version: Type.Integer({ minimum: 1 }) } },
    },
  },
  '/dashboard': {
    description:
      'Live metrics for admins: a snapshot on subscribing, then updates of the subscribed metrics.',
    server: { 'metrics:snapshot': DashboardMetrics, 'metrics:update': DashboardMetrics },
    client: {
      'dashboard:subscribe': {
        payload: DashboardSubscribe,
        ack: { metrics: Type.Array(Type.Union(dashboardMetricNames.map((name) => Type.Literal(name)))) },
      },
    },
  },
  '/admin': {
    description: "The channel's administration: its connections, disconnecting one, a global alert.",
    server: {},
    client: {
      'admin:connections': { ack: { connections: Type.Array(AdminConnection) } },
      'admin:disconnect': { payload: AdminDisconnect, ack: { disconnected: Type.Integer({ minimum: 0 }) } },
      'admin:global-alert': {
        payload: GlobalAlert,
        ack: {},
        description: 'every socket hears `global-alert`',
      },
    },
  },
}

/** What every namespace's sockets hear and may send (the credential's life is the connection's). */
const sessionEvents: {
  server: { readonly [Event in keyof SessionServerEvents]: TSchema }
  client: { readonly [Event in keyof SessionClientEvents]: ClientEventDoc }
} = {
  server: {
    'auth:expiring': AuthExpiring,
    'auth:failed': AuthFailed,
    'server:restart': ServerRestart,
    error: RealtimeError,
  },
  client: {
    'auth:refresh': {
      payload: AuthRefresh,
      ack: { expiresAt: Type.Integer({ description: 'epoch ms' }) },
      description: "a new token for the connection, checked again against the namespace's scope",
    },
  },
}

/** `chat:message` -> `chat.message` (a message key of the document may not hold a colon). */
const keyOf = (event: string) => event.replaceAll(':', '.')

/** An acknowledgement's answer: `{ok: true, ...}` or `{ok: false, error}`. */
const ackSchema = (data: TProperties) =>
  Type.Union([
    Type.Object({ ok: Type.Literal(true), ...data }),
    Type.Object({ ok: Type.Literal(false), error: RealtimeError }),
  ])

type Json = Record<string, unknown>

const namespaceChannelIds: { readonly [Path in RealtimeNamespace]: string } = {
  '/': 'socketio.main',
  '/chat': 'socketio.chat',
  '/notifications': 'socketio.notifications',
  '/collab': 'socketio.collab',
  '/dashboard': 'socketio.dashboard',
  '/admin': 'socketio.admin',
}

/** The session's events as shared messages (components), referred to by every namespace's channel. */
export function sessionMessages(): Record<string, Json> {
  const messages: Record<string, Json> = {}
  for (const [event, payload] of Object.entries(sessionEvents.server))
    messages[`server.${keyOf(event)}`] = { name: event, title: `${event} (server to client)`, payload }
  for (const [event, doc] of Object.entries(sessionEvents.client)) {
    messages[`client.${keyOf(event)}`] = clientMessage(event, doc)
    if (doc.ack) messages[`ack.${keyOf(event)}`] = ackMessage(event, doc.ack)
  }
  return messages
}

function clientMessage(event: string, doc: ClientEventDoc): Json {
  return {
    name: event,
    title: `${event} (client to server)`,
    ...(doc.description ? { summary: doc.description } : {}),
    ...(doc.payload ? { payload: doc.payload } : { summary: 'no payload: only its acknowledgement' }),
  }
}

function ackMessage(event: string, ack: TProperties): Json {
  return {
    name: event,
    title: `${event} acknowledgement`,
    summary: "the answer the server gives to the event's acknowledgement callback",
    payload: ackSchema(ack),
  }
}

/** The namespaces' channels and operations, and /ws's. */
export function realtimeChannelsAndOperations(): { channels: Json; operations: Json } {
  const channels: Json = {}
  const operations: Json = {}
  for (const [path, events] of Object.entries(namespaceEvents) as [
    RealtimeNamespace,
    (typeof namespaceEvents)[RealtimeNamespace],
  ][]) {
    const id = namespaceChannelIds[path]
    const channelRef = { $ref: `#/channels/${id}` }
    const messages: Json = {}
    const serverMessages: string[] = []
    for (const [event, payload] of Object.entries(events.server as Record<string, TSchema>)) {
      messages[`server.${keyOf(event)}`] = { name: event, title: `${event} (server to client)`, payload }
      serverMessages.push(`server.${keyOf(event)}`)
    }
    for (const event of Object.keys(sessionEvents.server)) {
      messages[`server.${keyOf(event)}`] = { $ref: `#/components/messages/server.${keyOf(event)}` }
      serverMessages.push(`server.${keyOf(event)}`)
    }
    const clientEvents: [string, ClientEventDoc, boolean][] = [
      ...Object.entries(events.client as Record<string, ClientEventDoc>).map(
        ([event, doc]): [string, ClientEventDoc, boolean] => [event, doc, false],
      ),
      ...Object.entries(sessionEvents.client).map(([event, doc]): [string, ClientEventDoc, boolean] => [
        event,
        doc,
        true,
      ]),
    ]
    for (const [event, doc, shared] of clientEvents) {
      const key = keyOf(event)
      messages[`client.${key}`] = shared
        ? { $ref: `#/components/messages/client.${key}` }
        : clientMessage(event, doc)
      if (doc.ack)
        messages[`ack.${key}`] = shared
          ? { $ref: `#/components/messages/ack.${key}` }
          : ackMessage(event, doc.ack)
      operations[`${id}.receive.${key}`] = {
        action: 'receive',
        channel: channelRef,
        summary: `${event}: a client sends it on ${path}`,
        messages: [{ $ref: `#/channels/${id}/messages/client.${key}` }],
        ...(doc.ack
          ? {
              reply: {
                channel: channelRef,
                messages: [{ $ref: `#/channels/${id}/messages/ack.${key}` }],
              },
            }
          : {}),
      }
    }
    channels[id] = {
      address: path,
      title: `Socket.IO namespace ${path}`,
      description: events.description,
      servers: [{ $ref: '#/servers/realtime' }],
      messages,
    }
    operations[`${id}.send`] = {
      action: 'send',
      channel: channelRef,
      summary: `what the server emits to the sockets of ${path}`,
      messages: serverMessages.map((key) => ({ $ref: `#/channels/${id}/messages/${key}` })),
    }
  }
  const raw = rawWebSocketChannel()
  return { channels: { ...channels, ...raw.channels }, operations: { ...operations, ...raw.operations } }
}

const typed = (type: string, properties: TProperties) =>
  Type.Object({ type: Type.Literal(type), ...properties })

/** /ws: JSON text messages with a `type`; everything else a client sends is echoed. */
function rawWebSocketChannel(): { channels: Json; operations: Json } {
  const serverMessages: Record<string, TSchema> = {
    welcome: typed('welcome', { message: Type.String() }),
    echo: Echo,
    'auth:expiring': typed('auth:expiring', AuthExpiring.properties),
    'auth:refreshed': typed('auth:refreshed', { expiresAt: Type.Integer({ description: 'epoch ms' }) }),
    'auth:failed': typed('auth:failed', AuthFailed.properties),
    error: typed('error', RealtimeError.properties),
  }
  const messages: Json = {}
  for (const [type, payload] of Object.entries(serverMessages))
    messages[`server.${keyOf(type)}`] = { name: type, title: `{type: '${type}'} (server to client)`, payload }
  messages['client.auth.refresh'] = {
    name: 'auth:refresh',
    title: "{type: 'auth:refresh'} (client to server)",
    payload: typed('auth:refresh', AuthRefresh.properties),
  }
  messages['client.any'] = {
    name: 'any',
    title: 'any other message (client to server)',
    summary: "echoed as {type: 'echo', payload}",
    payload: Type.Unknown(),
  }
  const channelRef = { $ref: '#/channels/ws' }
  return {
    channels: {
      ws: {
        address: realtimePaths.rawWebSocket,
        title: 'The raw WebSocket endpoint (RFC 6455)',
        description:
          'JSON text messages. Closed with 4001 for a disallowed Origin, 4401 when the credential no longer counts, 1008 after sending past its rate.',
        servers: [{ $ref: '#/servers/rawWebSocket' }],
        messages,
      },
    },
    operations: {
      'ws.send': {
        action: 'send',
        channel: channelRef,
        summary: 'what the server sends on /ws',
        messages: Object.keys(serverMessages).map((type) => ({
          $ref: `#/channels/ws/messages/server.${keyOf(type)}`,
        })),
      },
      'ws.receive': {
        action: 'receive',
        channel: channelRef,
        summary: 'what a client sends on /ws',
        messages: [
          { $ref: '#/channels/ws/messages/client.auth.refresh' },
          { $ref: '#/channels/ws/messages/client.any' },
        ],
      },
    },
  }
}
