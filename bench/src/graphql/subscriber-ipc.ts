// Messages between bench:graphql (parent) and its subscriber process (subscriber-process.ts): the requests below, the
// answers as bench:realtime's client processes give them (realtime/client-ipc.ts' ClientMessage: ready, reply, and
// received-all when every subscriber has a post). Times are monotonicMs() (CLOCK_MONOTONIC, shared by the processes),
// so the parent's send times and the subscribers' receive times can be subtracted.

export interface SubscribeRequest {
  type: 'subscribe'
  /** ws://127.0.0.1:<port>/graphql of instance 2 */
  url: string
  count: number
  /** the connection_init payload's credential (the bare server ignores it) */
  authorization: string
  query: string
}

export interface SubscribeReply {
  connected: number
  failed: number
  errors: Record<string, number>
}

export interface ReceiptsReply {
  /** post seq (from its title) -> the receive time of each subscriber that had it */
  receipts: Record<number, number[]>
  /** a delivery's JSON size as a subscriber received it (0 when none came) */
  payloadBytes: number
  /** subscription errors, by message */
  errors: Record<string, number>
}

export type SubscriberRequest = SubscribeRequest | { type: 'receipts' } | { type: 'disconnect' }
