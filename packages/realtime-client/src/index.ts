// @meridian/realtime-client: the typed client of Meridian's realtime channel (Socket.IO) for Node and browsers.
export {
  createRealtimeClient,
  type RealtimeClient,
  type RealtimeClientOptions,
  type RealtimeSocket,
} from './client.ts'
export type { ConnectionEventName, ConnectionEvents } from './connection-events.ts'
// The channel's event maps and payloads, for annotating handlers (`(message: ChatMessage) => ...`).
export type * from './contracts.ts'
export {
  type ReconnectionPolicy,
  type ReconnectionSetting,
  reconnectDelay,
  reconnectionManagerOptions,
  reconnectionPolicies,
} from './reconnection.ts'
export {
  defaultRequestTimeoutMs,
  type EmittingSocket,
  RealtimeRequestError,
  RealtimeTimeoutError,
  type RequestAnswer,
  type RequestEvent,
  type RequestPayload,
  request,
  requestWithin,
} from './request.ts'
