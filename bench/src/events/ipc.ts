// Messages between the events bench (parent) and its writer, relay and consumer processes over the fork IPC channel.

export type Role = 'writer' | 'relay' | 'consumer'

/** What every child is told once it has started (the first request). */
export interface ChildConfig {
  role: Role
  /** the run's own database (outbox and inbox tables) */
  databaseUrl: string
  brokers: string
  /** the event topic of this phase; also the events' `type` */
  topic: string
  /** consumer: its group; writer, relay: unused */
  group: string
  /** relay: LISTEN for outbox commits (the NOTIFY wake-up) or only poll */
  listen: boolean
  /** relay: poll interval, ms */
  pollIntervalMs: number
  /** consumer: partitions handled at once */
  concurrency: number
  /** writer: pool size, one transaction in flight per connection */
  connections: number
  /** writer: distinct aggregate ids (message keys) the events are spread over */
  aggregates: number
}

/**
 * Writer: append for `seconds`, at `rate` events/s (open loop, paced), or as fast as the connections go (null) while
 * fewer than `maxBacklog` events are appended and not yet handled (null: no bound), as told by `delivered`.
 */
export interface RunRequest {
  kind: 'run'
  rate: number | null
  seconds: number
  maxBacklog: number | null
}

/** Writer: fill the outbox with `events` events, `perTransaction` to a transaction, before any relay runs. */
export interface PrefillRequest {
  kind: 'prefill'
  events: number
  perTransaction: number
}

export type Request =
  | { kind: 'init'; config: ChildConfig }
  | RunRequest
  | PrefillRequest
  /** consumer: hand over what was handled since the last collect; relay: what was published */
  | { kind: 'collect' }
  /** the process's CPU time so far */
  | { kind: 'cpu' }
  /** close everything and leave; the reply carries the process's CPU time */
  | { kind: 'stop' }

/** Told without an answer. Writer: how many events the consumer has handled (its backlog bound). */
export interface Notice {
  kind: 'delivered'
  count: number
}

export type ParentMessage =
  | { type: 'request'; id: number; request: Request }
  | { type: 'notice'; notice: Notice }

export type ChildMessage =
  | { type: 'reply'; id: number; ok: true; result: unknown }
  | { type: 'reply'; id: number; ok: false; message: string }
  /** consumer: events handled so far (sent every 50 ms while it changes) */
  | { type: 'progress'; count: number }

/** The writer's answer to `run`. Times are monotonicMs(). */
export interface WriterRun {
  startedAt: number
  endedAt: number
  /** per event, by sequence number: when appendToOutbox was called (inside the transaction) */
  appendedAt: number[]
  /** per event, by sequence number: when COMMIT returned */
  committedAt: number[]
  /** transactions that failed (their events are not counted) */
  errors: number
}

/** The writer's answer to `prefill`. */
export interface PrefillReply {
  appended: number
  seconds: number
}

/**
 * The consumer's answer to `collect`, one entry per handler call in each array: the event's sequence number and the
 * append time its envelope carried, when the handler ran, the envelope id.
 */
export interface ConsumerRecords {
  seqs: number[]
  appendedAt: number[]
  receivedAt: number[]
  eventIds: string[]
}

/** The relay's answer to `collect`, one entry per row Kafka acknowledged (onPublished): envelope id and when. */
export interface RelayRecords {
  eventIds: string[]
  publishedAt: number[]
}

export interface CpuReply {
  /** CPU time of the whole process since it started, microseconds */
  cpuMicros: number
}

export interface StopReply {
  /** CPU time of the whole process since it started, microseconds */
  cpuMicros: number
  peakRssBytes: number
}
