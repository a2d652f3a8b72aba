// The active outbox relay's publishing: select a batch in id order, publish it, then delete or mark its rows (two
// statements a pass); the backlog gauges and the removal of marked rows past retention (why it works this way: the comment on createOutboxRelay).
import type { Span } from '@opentelemetry/api'
import type { EventMetrics } from './event-metrics.ts'
import type { EventProducer, OutgoingMessage } from './kafka.ts'
import type { StoredDeadLetter } from './outbox.ts'
import { type LeaderStatements, type Leadership, LeadershipLost } from './outbox-leadership.ts'
import type { OutboxRelayLogger } from './outbox-relay-logger.ts'
import { ProcessHeader } from './process-stamp.ts'
import { deadLetterTopicOf, RetryHeader } from './retry.ts'
import { recordFailure, startPublishSpan, TraceHeader, withTraceHeaders } from './tracing.ts'

/** A row Kafka has acknowledged, as told to `onPublished`. */
export interface PublishedOutboxRow {
  /** bigint as text; the message's `message-id` header is `outbox-{outboxId}` */
  outboxId: string
  /** the envelope id, by which consumers deduplicate */
  eventId: string
  eventType: string
  aggregateId: string
  createdAt: Date
}

/** Kafka (or the onPublished hook) failed; the database session is fine. */
export class PublishFailed extends Error {
  constructor(cause: unknown) {
    super(`publishing failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = 'PublishFailed'
  }
}

export interface OutboxPublishingOptions {
  /** runs the statements on the leader's session, and gives the session up when it cannot be trusted */
  leader: LeaderStatements
  producer: EventProducer
  logger: OutboxRelayLogger
  metrics: EventMetrics | undefined
  onPublished: ((rows: PublishedOutboxRow[]) => void | Promise<void>) | undefined
  topicPrefix: string
  batchSize: number
  mode: 'delete' | 'mark'
  retentionMs: number
}

interface OutboxRow {
  /** the backend that read it: the leader's session, or the lock is not ours */
  pid: number
  outboxId: string
  eventType: string
  aggregateId: string
  eventId: string
  payload: string
  createdAt: Date
  /** the W3C context stored at append time (null: none) */
  traceParent: string | null
  traceState: string | null
  /** set: the row is a dead letter, published to its type's `.dlt` topic with the failure headers */
  deadLetter: StoredDeadLetter | null
  /** the process stamps stored at append time, as their headers' text (null: none) */
  processCommand: string | null
  processAnswer: string | null
}

const maxCleanupIntervalMs = 60_000
// how often the pending-rows and lag gauges are recounted
const gaugeIntervalMs = 1000

/**
 * Publishes the outbox as the active relay, one pass at a time; keeps the batch to send again after a failure.
 *
 * A pass costs two statements: the batch's select (which also names the session's backend, so a session that was
 * replaced without our noticing publishes nothing) and, once Kafka has acknowledged the batch, its delete (or mark).
 * No transaction and no row locks: only the holder of the advisory lock publishes (outbox-leadership.ts), and a
 * batch published again after a crash or a lost session is deduplicated by the consumers' inbox, as any redelivery.
 * The backlog gauges cost a third statement, at most once a second and only while there is a backlog to show.
 */
export class OutboxPublisher {
  /**
   * The batch whose publishing failed: sent again, unchanged, before anything newer. Kept across a change of session,
   * since it is this relay's producer whose numbering must match.
   */
  #unfinishedBatch: string[] | undefined
  #lastCleanupAt = 0
  #lastMeasuredAt = 0
  /** the gauges last showed a backlog (or were never set): they are measured again when due */
  #gaugesShowBacklog = true
  readonly #cleanupIntervalMs: number

  constructor(private readonly options: OutboxPublishingOptions) {
    this.#cleanupIntervalMs = Math.min(options.retentionMs, maxCleanupIntervalMs)
  }

  /** rows of the batch that failed to publish and will be sent again first */
  get unfinishedRows(): number {
    return this.#unfinishedBatch?.length ?? 0
  }

  /** A newly elected relay measures the backlog and removes expired rows on its first pass. */
  restartSchedules(): void {
    this.#lastCleanupAt = 0
    this.#lastMeasuredAt = 0
    this.#gaugesShowBacklog = true
  }

  /** One pass as the active relay; resolves to the number of rows published. */
  async publishPending(lead: Leadership): Promise<number> {
    if (this.options.mode === 'mark' && Date.now() - this.#lastCleanupAt >= this.#cleanupIntervalMs)
      await this.#removeExpired(lead)
    const retrying = this.#unfinishedBatch !== undefined
    const published = await this.#publishBatch(lead)
    // the batch sent again was all this pass read: what was committed meanwhile follows at once
    if (retrying) return published + (await this.publishPending(lead))
    return published
  }

  /** The pending-rows and lag gauges, recounted at most once a second (the count scans the unpublished rows). */
  async #measureWhenDue(lead: Leadership): Promise<void> {
    const { leader, metrics } = this.options
    if (!metrics || Date.now() - this.#lastMeasuredAt < gaugeIntervalMs) return
    const { db } = lead.session
    const [state] = await leader.asLeader(
      lead,
      () => db<{ pending: number; lagSeconds: number }[]>`
        select count(*)::int as pending,
          coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as "lagSeconds"
        from outbox where not published`,
    )
    this.#lastMeasuredAt = Date.now()
    const pending = state?.pending ?? 0
    this.#gaugesShowBacklog = pending > 0
    metrics.outboxPending.set(pending)
    metrics.outboxLagSeconds.set(Math.max(0, state?.lagSeconds ?? 0))
  }

  /** Selects the batch (the unfinished one first), publishes it, then deletes or marks its rows. */
  async #publishBatch(lead: Leadership): Promise<number> {
    const { leader, producer, metrics, onPublished, topicPrefix, batchSize, mode } = this.options
    const { db } = lead.session
    const rows = await selectBatch(leader, lead, this.#unfinishedBatch, batchSize)
    // the connection was replaced without our noticing: the lock stayed with the old one
    if (rows.length > 0 && rows[0]?.pid !== lead.pid)
      throw new LeadershipLost('its database connection was replaced')
    if (rows.length > 0 || this.#gaugesShowBacklog) await this.#measureWhenDue(lead)
    if (rows.length === 0) {
      this.#unfinishedBatch = undefined
      return 0
    }
    const ids = rows.map((row) => row.outboxId)
    this.#unfinishedBatch = ids

    const publishing = rows.map((row) => toMessage(row, topicPrefix))
    try {
      await producer.publish(publishing.map(({ message }) => message))
    } catch (error) {
      for (const { span } of publishing) if (span) recordFailure(span, error)
      throw new PublishFailed(error)
    } finally {
      for (const { span } of publishing) span?.end()
    }
    if (metrics) {
      for (const [topic, count] of countByTopic(rows, topicPrefix)) metrics.published.inc({ topic }, count)
    }
    try {
      await onPublished?.(rows.map(toPublished))
    } catch (error) {
      throw new PublishFailed(error)
    }

    await leader.asLeader(lead, () =>
      mode === 'delete'
        ? db`delete from outbox where id = any(${db.array(ids)}::bigint[])`
        : db`update outbox set published = true, published_at = now() where id = any(${db.array(ids)}::bigint[])`,
    )
    this.#unfinishedBatch = undefined
    return rows.length
  }

  async #removeExpired(lead: Leadership): Promise<void> {
    const { leader, logger, retentionMs } = this.options
    const { db } = lead.session
    const removed = await leader.asLeader(
      lead,
      () => db`
        delete from outbox
        where published and published_at < now() - ${retentionMs}::float8 * interval '1 millisecond'`,
    )
    this.#lastCleanupAt = Date.now()
    if (removed.count > 0)
      logger.info({ removed: removed.count }, 'removed published outbox rows past retention')
  }
}

/** The rows of the batch to send again, or the next `batchSize` rows, in id order, each with the session's backend. */
function selectBatch(
  leader: LeaderStatements,
  lead: Leadership,
  retrying: string[] | undefined,
  batchSize: number,
): Promise<OutboxRow[]> {
  const { db } = lead.session
  return leader.asLeader(lead, () =>
    retrying
      ? db<OutboxRow[]>`
          select pg_backend_pid() as pid, id::text as "outboxId", event_type as "eventType",
            aggregate_id as "aggregateId", payload->>'id' as "eventId", payload::text as payload,
            created_at as "createdAt", trace_parent as "traceParent", trace_state as "traceState",
            dead_letter as "deadLetter", process_command as "processCommand", process_answer as "processAnswer"
          from outbox where id = any(${db.array(retrying)}::bigint[]) and not published
          order by id`
      : db<OutboxRow[]>`
          select pg_backend_pid() as pid, id::text as "outboxId", event_type as "eventType",
            aggregate_id as "aggregateId", payload->>'id' as "eventId", payload::text as payload,
            created_at as "createdAt", trace_parent as "traceParent", trace_state as "traceState",
            dead_letter as "deadLetter", process_command as "processCommand", process_answer as "processAnswer"
          from outbox where not published
          order by id limit ${batchSize}`,
  )
}

/**
 * The message of a row, and its publish span when the row carries a trace context: the message's trace headers then
 * name that span (a child of the stored context), so the consumer's span is the publish span's child. Without tracing
 * in this process, the stored headers go out as they were written.
 */
function toMessage(
  row: OutboxRow,
  topicPrefix: string,
): { message: OutgoingMessage; span: Span | undefined } {
  const topic = topicOf(row, topicPrefix)
  const headers: Record<string, string> = {
    'message-id': `outbox-${row.outboxId}`,
    ...deadLetterHeaders(row, topicPrefix),
  }
  if (row.traceParent !== null) headers[TraceHeader.parent] = row.traceParent
  if (row.traceState !== null) headers[TraceHeader.state] = row.traceState
  if (row.processCommand !== null) headers[ProcessHeader.command] = row.processCommand
  if (row.processAnswer !== null) headers[ProcessHeader.answer] = row.processAnswer
  const publish = startPublishSpan(row, {
    topic,
    key: row.aggregateId,
    outboxId: row.outboxId,
    eventId: row.eventId,
    eventType: row.eventType,
  })
  return {
    message: {
      topic,
      key: row.aggregateId,
      value: row.payload,
      headers: publish ? withTraceHeaders(headers, publish.context) : headers,
    },
    span: publish?.span,
  }
}

/** The topic a row goes to: its type's (in the namespace), or that topic's `.dlt` for a dead letter. */
function topicOf(row: Pick<OutboxRow, 'eventType' | 'deadLetter'>, topicPrefix: string): string {
  const topic = `${topicPrefix}${row.eventType}`
  return row.deadLetter ? deadLetterTopicOf(topic) : topic
}

/** A dead letter's failure headers, as a consumer's dead letter has them (dead-letter.ts); none for an event. */
function deadLetterHeaders(row: OutboxRow, topicPrefix: string): Record<string, string> {
  const { deadLetter } = row
  if (!deadLetter) return {}
  return {
    [RetryHeader.originalTopic]: `${topicPrefix}${row.eventType}`,
    [RetryHeader.errorMessage]: deadLetter.errorMessage,
    [RetryHeader.deadLetteredAt]: deadLetter.deadLetteredAt,
    [RetryHeader.consumerGroup]: `${topicPrefix}${deadLetter.group}`,
    [RetryHeader.retryCount]: String(deadLetter.retries),
  }
}

function toPublished(row: OutboxRow): PublishedOutboxRow {
  return {
    outboxId: row.outboxId,
    eventId: row.eventId,
    eventType: row.eventType,
    aggregateId: row.aggregateId,
    createdAt: row.createdAt,
  }
}

function countByTopic(rows: OutboxRow[], topicPrefix: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const row of rows) {
    const topic = topicOf(row, topicPrefix)
    counts.set(topic, (counts.get(topic) ?? 0) + 1)
  }
  return counts
}
