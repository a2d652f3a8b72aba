// Writing domain events to the transactional outbox, inside the caller's transaction, for the OutboxRelay to publish.
import type { Queryable } from '@meridian/db'
import type { DomainEvent } from './envelope.ts'
import { newEventId } from './event-id.ts'
import { answeredStamp, type ProcessStamp, stampText } from './process-stamp.ts'
import { activeTraceContext } from './tracing.ts'

/** The LISTEN/NOTIFY channel signalled when outbox rows commit, so the relay need not wait for its next poll. */
export const OUTBOX_CHANNEL = 'meridian_outbox'

/** outbox.event_type and outbox.aggregate_id are varchar(255) */
const maxColumnLength = 255

/**
 * A second envelope written beside the event while consumers migrate to a breaking version (spec, Versioning 4):
 * e.g. `order.placed.v2` dual-published with `order.placed`.
 */
export interface AlsoPublishAs {
  type: string
  schemaVersion: string
  /** the new type's data; the event's own data when omitted */
  data?: Record<string, unknown>
}

/**
 * Work a service gave up on, recorded as its event: published to `{type}.dlt` (not `{type}`) with the headers a
 * consumer's dead letter carries, so the operators' dead-letter pages list it and a replay sends it to `{type}`.
 */
export interface OutboxDeadLetter {
  /** why it was given up (the `error-message` header), cut to 1000 characters */
  errorMessage: string
  /** who gave it up (the `consumer-group` header; the relay prefixes the namespace as a consumer's group has it) */
  group: string
  /** the tries it had (the `retry-count` header) */
  retries: number
}

/** The dead letter as stored in outbox.dead_letter: the headers' values but the topics, which the relay names. */
export interface StoredDeadLetter extends OutboxDeadLetter {
  /** ISO 8601: when it was given up (the `dead-lettered-at` header) */
  deadLetteredAt: string
}

export interface AppendToOutboxOptions {
  /** the message key: the events of one aggregate are published in the order they were appended */
  aggregateId: string
  alsoAs?: AlsoPublishAs[]
  /** the event (and each alsoAs version) is a dead letter: published to its type's `.dlt` topic */
  deadLetter?: OutboxDeadLetter
  /**
   * the event is a process's command: the instance and step that asked, sent as the `process` header and carried back
   * on the answers (process-stamp.ts)
   */
  command?: ProcessStamp
}

export interface OutboxEntry {
  /** the outbox row id (a bigint as text); the message carries the header `message-id: outbox-{outboxId}` */
  outboxId: string
  event: DomainEvent
}

/**
 * Writes `event` (and its `alsoAs` versions, each with an id of its own) to the outbox through `tx`, so it commits or
 * rolls back with the business write beside it; the relay publishes it only after the commit. Also signals
 * OUTBOX_CHANNEL, which PostgreSQL delivers on commit and never for a rolled-back transaction.
 *
 * Events of one aggregate are published in the order of their outbox rows: writes to one aggregate must be serialised
 * (e.g. by updating the aggregate's row in the same transaction), as they are anyway to keep the aggregate consistent.
 * The envelope is written as given; createEvent() has already checked a catalogue event against its schema.
 *
 * The W3C trace context active now (the request's or the consumer's span) is stored with the rows, and the relay sends
 * it on as the `traceparent`/`tracestate` headers: the trace continues in the consumers. Nothing is stored when no
 * span is active or tracing is off. Likewise the process stamp of the command being handled now (process-stamp.ts):
 * the rows answer it, and the relay sends it as the `process-answer` header.
 */
export async function appendToOutbox(
  tx: Queryable,
  event: DomainEvent,
  options: AppendToOutboxOptions,
): Promise<OutboxEntry[]> {
  const events = [event, ...(options.alsoAs ?? []).map((version) => alsoAsEvent(event, version))]
  checkColumn('aggregate id', options.aggregateId)
  for (const each of events) checkColumn('event type', each.type)
  const { traceParent, traceState } = activeTraceContext()
  const deadLetter = storedDeadLetter(options.deadLetter)
  const command = options.command ? stampText(options.command) : null
  const answered = answeredStamp()
  const answer = answered ? stampText(answered) : null

  // One statement for every row and the signal: a business transaction pays a single round trip for its events.
  // Repeated identical notifications in one transaction are delivered once.
  const rows = await tx<{ id: string; eventId: string }[]>`
    with written as (
      insert into outbox (event_type, aggregate_id, payload, trace_parent, trace_state, dead_letter, process_command,
        process_answer)
      select entry.event_type, ${options.aggregateId}, entry.payload::jsonb, ${traceParent}, ${traceState},
        ${deadLetter}::text::jsonb, ${command}, ${answer}
      from unnest(${tx.array(events.map((each) => each.type))}::text[],
                  ${tx.array(events.map((each) => JSON.stringify(each)))}::text[])
        with ordinality as entry(event_type, payload, position)
      order by entry.position
      returning id, payload->>'id' as event_id
    )
    select id::text as id, event_id as "eventId", pg_notify(${OUTBOX_CHANNEL}, '') from written`
  const outboxIds = new Map(rows.map((row) => [row.eventId, row.id]))
  return events.map((each) => {
    const outboxId = outboxIds.get(each.id)
    if (outboxId === undefined) throw new Error(`the outbox row of event ${each.id} was not written`)
    return { outboxId, event: each }
  })
}

function storedDeadLetter(deadLetter: OutboxDeadLetter | undefined): string | null {
  if (!deadLetter) return null
  const { errorMessage, group, retries } = deadLetter
  const cut = errorMessage.length > 1000 ? `${errorMessage.slice(0, 999)}…` : errorMessage
  const stored: StoredDeadLetter = {
    errorMessage: cut,
    group,
    retries,
    deadLetteredAt: new Date().toISOString(),
  }
  return JSON.stringify(stored)
}

function alsoAsEvent(event: DomainEvent, version: AlsoPublishAs): DomainEvent {
  return {
    id: newEventId(),
    type: version.type,
    source: event.source,
    schemaVersion: version.schemaVersion,
    // the same occurrence, told in another version
    timestamp: event.timestamp,
    data: version.data ?? event.data,
  }
}

function checkColumn(what: string, value: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxColumnLength) {
    throw new RangeError(`the ${what} must be 1 to ${maxColumnLength} characters, got '${String(value)}'`)
  }
}
