// Messages between bench:realtime (parent) and its client processes (client-process.ts) over the fork IPC channel.
// Times are monotonicMs() (CLOCK_MONOTONIC, shared by every process of the machine), so a send time taken in one
// process and a receive time taken in another can be subtracted.
import type { TokenSettings } from './tokens.ts'

export interface ConnectRequest {
  type: 'connect'
  /** the server's origin, http://127.0.0.1:<port> */
  url: string
  /** the namespace every socket holds (its own engine connection each) */
  namespace: string
  count: number
  /** connections in flight at once in this process */
  concurrency: number
  /** source addresses, round-robin (the gateway counts its limits per address) */
  localAddresses: string[]
  /** each socket mints a token of its own user when set (the gateway); no auth when null (bare) */
  tokens: TokenSettings | null
}

export interface ConnectReply {
  connected: number
  failed: number
  errors: Record<string, number>
  startedAt: number
  endedAt: number
}

/**
 * The first `count` held sockets also open /chat on their connection (as the user of `token`), join the broadcast
 * room and record each `chat:message` of it.
 */
export interface JoinRoomRequest {
  type: 'join-room'
  count: number
  roomId: string
  token: string | null
}

export interface JoinRoomReply {
  joined: number
  failed: number
  errors: Record<string, number>
  elapsedMs: number
}

/** The control socket: /chat as the broadcast room's owner (the gateway) or anyone (bare), joined to the room. */
export interface ControlConnectRequest {
  type: 'control-connect'
  url: string
  token: string | null
  roomId: string
}

/** `chat:message` to the broadcast room, its text `b<seq>:` padded to `textBytes`. */
export interface BroadcastRequest {
  type: 'broadcast'
  seq: number
  textBytes: number
}

export interface BroadcastReply {
  sentAt: number
  ok: boolean
}

export interface ChatStartRequest {
  type: 'chat-start'
  url: string
  roomId: string
  /** one per chatter: its bearer token (the gateway) or null (bare) */
  tokens: (string | null)[]
  /** pause between a chatter's echo and its next message */
  intervalMs: number
}

export interface ChatStopReply {
  roundTripsMs: number[]
  failed: number
  errors: Record<string, number>
}

/**
 * The flooder: one socket of its own user on /chat, in a room of its own, sending `chat:message` at `ratePerSecond`
 * (open loop, whatever the answers) with a text of `textBytes`; closed by the server, it connects again at once.
 */
export interface FloodStartRequest {
  type: 'flood-start'
  url: string
  token: string | null
  roomId: string
  ratePerSecond: number
  textBytes: number
}

export interface FloodStopReply {
  /** events sent while connected */
  sent: number
  /** events due while the socket was not connected (not sent) */
  skipped: number
  /** its own messages that came back (accepted, stored and broadcast to its room) */
  accepted: number
  /** `error` events with code RATE_LIMITED */
  refused: number
  /** connections made (1 when the server never closed it) */
  connections: number
  seconds: number
}

export interface ReceiptsReply {
  /** broadcast seq -> the receive times of this process's sockets */
  receipts: Record<number, number[]>
  /** the JSON size of a broadcast as received (0 when none came) */
  payloadBytes: number
}

export type ClientRequest =
  | ConnectRequest
  | JoinRoomRequest
  | ControlConnectRequest
  | BroadcastRequest
  | ChatStartRequest
  | { type: 'chat-stop' }
  | FloodStartRequest
  | { type: 'flood-stop' }
  | { type: 'receipts' }
  | { type: 'disconnect' }

export type ClientCommand = ClientRequest & { id: number }

export type ClientMessage =
  | { type: 'ready' }
  | { type: 'reply'; id: number; ok: true; body: unknown }
  | { type: 'reply'; id: number; ok: false; message: string }
  /** every socket of this process in the broadcast room has received broadcast `seq` */
  | { type: 'received-all'; seq: number }

/**
 * A client process's side of the channel: sends `ready`, answers each request of the parent with its handler's
 * reply (or its error) under the request's id, and exits when the parent goes away.
 */
export function answerParent<Request extends { id: number }>(
  handle: (request: Request) => Promise<unknown>,
): (message: ClientMessage) => void {
  const send = (message: ClientMessage) => process.send?.(message)
  process.on('message', (request: Request) => {
    handle(request).then(
      (body) => send({ type: 'reply', id: request.id, ok: true, body: body ?? {} }),
      (error: unknown) =>
        send({
          type: 'reply',
          id: request.id,
          ok: false,
          message: error instanceof Error ? error.message : String(error),
        }),
    )
  })
  // the bench went away: nothing to hold or listen for any more
  process.on('disconnect', () => process.exit(0))
  send({ type: 'ready' })
  return send
}
