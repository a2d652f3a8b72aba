// The realtime client: one Manager (one connection) multiplexing a typed socket per namespace, with the connection's
// events surfaced in one place.
import { Manager, type ManagerOptions, type Socket } from 'socket.io-client'
import {
  type ConnectionEventEmitter,
  type ConnectionEventName,
  type ConnectionEvents,
  createConnectionEventEmitter,
} from './connection-events.ts'
import type { RealtimeNamespace, RealtimeNamespaces, realtimePaths } from './contracts.ts'
import { type ReconnectionSetting, reconnectionManagerOptions } from './reconnection.ts'
import { defaultRequestTimeoutMs, setRequestTimeout } from './request.ts'
import { createTokenRefresh, handshakeAuth, type SessionSocket } from './session-auth.ts'

/** The typed socket of a namespace: what the server emits to it, what it emits to the server. */
export type RealtimeSocket<Namespace extends RealtimeNamespace> = Socket<
  RealtimeNamespaces[Namespace]['server'],
  RealtimeNamespaces[Namespace]['client']
>

export interface RealtimeClientOptions {
  /** The gateway's (or a realtime service's) origin, e.g. `http://127.0.0.1:8080`; namespaces are added to it. */
  url: string
  /** Called on every connect and reconnect of every namespace; its value is sent as the handshake's `auth.token`. */
  token?: () => string | Promise<string>
  /** Answers `auth:expiring`: a new token, sent as `auth:refresh`. Also make `token()` return it from then on. */
  refreshToken?: () => Promise<string>
  /** Browsers: send cookies with the handshake (cookie sessions, cross-origin). */
  withCredentials?: boolean
  /** Node: the `Cookie` header of the handshake (browsers send their cookies themselves). */
  cookie?: string
  /** `'default'` (10 attempts, max 5 s), `'persistent'` (unlimited, max 30 s), a custom policy, or `false`. */
  reconnection?: ReconnectionSetting
  /**
   * Default `['websocket']`: behind a gateway balancing several realtime instances without sticky sessions, HTTP
   * long-polling breaks (its requests land on instances that do not know the session). `['polling', 'websocket']`
   * requires sticky sessions.
   */
  transports?: ManagerOptions['transports']
  /** The engine path, default `/socket.io/`. */
  path?: string
  /** How long `request()` waits for an acknowledgement on this client's sockets, default 10000 ms. */
  requestTimeoutMs?: number
  /** Connect a namespace socket as soon as `namespace()` creates it, default true. */
  autoConnect?: boolean
  /** Any other socket.io-client Manager option; the options above take precedence over these. */
  managerOptions?: Partial<ManagerOptions>
}

export interface RealtimeClient {
  /** The one Manager every namespace shares (reconnection state, the engine). */
  readonly manager: Manager
  /** The namespace's socket, created (and connected, unless `autoConnect: false`) on the first call. */
  namespace<Namespace extends RealtimeNamespace>(namespace: Namespace): RealtimeSocket<Namespace>
  /** Listens to a connection event; returns a function that stops listening. */
  on<Name extends ConnectionEventName>(name: Name, listener: ConnectionEvents[Name]): () => void
  off<Name extends ConnectionEventName>(name: Name, listener: ConnectionEvents[Name]): void
  /** Disconnects every namespace and the connection; the client cannot be used afterwards. */
  close(): void
}

// The contracts' engine path, written here so the SDK loads nothing of @meridian/contracts; the type keeps it equal.
const enginePath: (typeof realtimePaths)['engine'] = '/socket.io/'

export function createRealtimeClient(options: RealtimeClientOptions): RealtimeClient {
  const events = createConnectionEventEmitter()
  const manager = new Manager(options.url, managerOptionsOf(options))
  const answerExpiring = options.refreshToken ? createTokenRefresh(options.refreshToken, events) : undefined
  const sockets = new Map<RealtimeNamespace, SessionSocket>()
  let closed = false

  manager.on('reconnect_attempt', (attempt) => events.emit('reconnect_attempt', attempt))
  manager.on('reconnect', (attempt) => events.emit('reconnect', attempt))
  manager.on('reconnect_failed', () => events.emit('reconnect_failed'))

  function createSocket(namespace: RealtimeNamespace): SessionSocket {
    const socket: SessionSocket = manager.socket(namespace, {
      auth: handshakeAuth(namespace, options.token, events),
    })
    setRequestTimeout(socket, options.requestTimeoutMs ?? defaultRequestTimeoutMs)
    surfaceEvents(namespace, socket, events)
    if (answerExpiring) socket.on('auth:expiring', () => void answerExpiring(namespace, socket))
    if (options.autoConnect ?? true) socket.connect()
    return socket
  }

  return {
    manager,
    namespace<Namespace extends RealtimeNamespace>(namespace: Namespace) {
      if (closed) throw new Error('The realtime client is closed')
      let socket = sockets.get(namespace)
      if (!socket) {
        socket = createSocket(namespace)
        sockets.set(namespace, socket)
      }
      return socket as unknown as RealtimeSocket<Namespace>
    },
    on: events.on,
    off: events.off,
    close() {
      if (closed) return
      closed = true
      for (const socket of sockets.values()) socket.disconnect()
      if (manager._readyState !== 'closed') manager._close()
      events.clear()
    },
  }
}

function managerOptionsOf(options: RealtimeClientOptions): Partial<ManagerOptions> {
  return {
    ...options.managerOptions,
    path: options.path ?? enginePath,
    transports: options.transports ?? ['websocket'],
    ...(options.withCredentials === undefined ? {} : { withCredentials: options.withCredentials }),
    ...(options.cookie === undefined
      ? {}
      : { extraHeaders: { ...options.managerOptions?.extraHeaders, cookie: options.cookie } }),
    ...reconnectionManagerOptions(options.reconnection ?? 'default'),
    // Sockets connect when a namespace is first asked for, so the engine never opens without one.
    autoConnect: false,
  }
}

/** Forwards a namespace socket's connection events, detecting reconnects that lost the connection state. */
function surfaceEvents(
  namespace: RealtimeNamespace,
  socket: SessionSocket,
  events: ConnectionEventEmitter,
): void {
  let connectedBefore = false
  socket.on('connect', () => {
    // `recovered` is only ever true when the server has connection-state recovery and the session survived.
    const recovered = socket.recovered === true
    events.emit('connect', namespace, { recovered })
    if (connectedBefore && !recovered) events.emit('resync', namespace)
    connectedBefore = true
  })
  socket.on('disconnect', (reason, description) => events.emit('disconnect', namespace, reason, description))
  socket.on('connect_error', (error) => events.emit('connect_error', namespace, error))
  socket.on('server:restart', (notice) => events.emit('server:restart', namespace, notice))
  socket.on('auth:failed', (failure) => events.emit('auth:failed', namespace, failure))
}
