// A consumer's batch handling: a fetched batch cut into runs, each event decoded, deduplicated by the inbox and applied
// by the handler in one transaction with its inbox record; failed events are handed to the retry routing.
import type { EventType } from '@meridian/contracts'
import { isDatabaseUnavailable, type TransactionSql, transaction } from '@meridian/db'
import { type Context, context, type Span } from '@opentelemetry/api'
import type { KafkaMessage } from 'kafkajs'
import type { ConsumeContext, ConsumeOptions } from './consume-options.ts'
import {
  type FailureRouting,
  isOwnRetry,
  retryWaitMs,
  routeFailedEvent,
  routeInvalidEvent,
} from './consumer-retries.ts'
import { type CatalogueEvent, type DomainEvent, InvalidEventError, parseEvent } from './envelope.ts'
import { recordInInbox, recordManyInInbox } from './inbox.ts'
import { inAnswerTo, ProcessHeader, stampIn } from './process-stamp.ts'
import { retryLevelOf } from './retry.ts'
import { describeDelivery, recordFailure, startDeliverySpan } from './tracing.ts'

/** What batch handling works with: the consumer's options, its event topic and where its failures go. */
export interface BatchHandling<Type extends EventType> {
  options: ConsumeOptions<Type>
  /** the event topic: `topic`, or the event type */
  topic: string
  routing: FailureRouting
}

/**
 * What a fetched batch is worked through as: consecutive valid events of the event topic applied together, and
 * single messages (retries, which may have to wait, and messages that do not parse).
 */
export type Run<Type extends EventType> =
  | { kind: 'events'; items: EventItem<Type>[] }
  | { kind: 'message'; message: KafkaMessage }
  /**
   * an event whose handler threw inside a shared transaction: straight to its retry, not run a second time; its
   * delivery span is still open, so the retry or dead letter is told in it
   */
  | { kind: 'failed'; item: EventItem<Type>; error: unknown; delivery: Delivery }

interface EventItem<Type extends EventType> {
  message: KafkaMessage
  event: CatalogueEvent<Type>
}

/** A delivery's `<topic> process` span and the context its handler runs in. */
export interface Delivery {
  span: Span
  context: Context
}

/** How a shared transaction ended when it did not commit: which handler threw, or that something else failed. */
export type EventsOutcome = 'done' | { failedAt: number; error: unknown; delivery: Delivery } | 'split'

/** A single message either done with, or a retry that is not due yet and must wait `waitMs` at its partition's head. */
export type MessageOutcome = 'done' | { waitMs: number }

export const firstMessageOf = (run: Run<EventType>): KafkaMessage =>
  run.kind === 'message'
    ? run.message
    : run.kind === 'failed'
      ? run.item.message
      : (run.items[0] as EventItem<EventType>).message
export const lastMessageOf = (run: Run<EventType>): KafkaMessage =>
  run.kind === 'message'
    ? run.message
    : run.kind === 'failed'
      ? run.item.message
      : (run.items.at(-1) as EventItem<EventType>).message

/** Groups consecutive valid events of the event topic, up to maxEventsPerTransaction; the rest go one by one. */
export function runsOf<Type extends EventType>(
  handling: BatchHandling<Type>,
  topic: string,
  messages: KafkaMessage[],
): Run<Type>[] {
  const most = handling.options.maxEventsPerTransaction ?? 100
  const runs: Run<Type>[] = []
  let open: Extract<Run<Type>, { kind: 'events' }> | undefined
  for (const message of messages) {
    const event =
      topic === handling.topic && most > 1 ? parseOrUndefined(handling.options, message) : undefined
    if (event === undefined) {
      open = undefined
      runs.push({ kind: 'message', message })
      continue
    }
    if (open === undefined || open.items.length >= most) {
      open = { kind: 'events', items: [] }
      runs.push(open)
    }
    open.items.push({ message, event })
  }
  return runs
}

/**
 * The runs that replace a run of events whose shared transaction rolled back, or undefined when it committed.
 * A handler threw: those before it are applied again together, it goes to its retry (its handler is not run twice
 * for one delivery), and those after it follow. Anything else failed: the events are applied one by one.
 */
export function runsAfterRollback<Type extends EventType>(
  run: Run<Type>,
  outcome: EventsOutcome,
): Run<Type>[] | undefined {
  if (run.kind !== 'events' || outcome === 'done') return undefined
  if (outcome === 'split') return run.items.map(({ message }) => ({ kind: 'message' as const, message }))
  const { failedAt, error, delivery } = outcome
  const before = run.items.slice(0, failedAt)
  const after = run.items.slice(failedAt + 1)
  return [
    ...(before.length > 0 ? [{ kind: 'events' as const, items: before }] : []),
    { kind: 'failed', item: run.items[failedAt] as EventItem<Type>, error, delivery },
    ...(after.length > 0 ? [{ kind: 'events' as const, items: after }] : []),
  ]
}

/**
 * Applies events of the event topic in one transaction with one inbox insert. When it rolls back: which handler
 * threw, or 'split' for any other failure; a thrown error when the database is unavailable.
 */
export async function applyEvents<Type extends EventType>(
  handling: BatchHandling<Type>,
  topic: string,
  partition: number,
  items: EventItem<Type>[],
): Promise<EventsOutcome> {
  const { options } = handling
  const contextOf = (message: KafkaMessage): ConsumeContext =>
    consumeContextOf(message, { topic, partition, offset: message.offset, attempt: 1 })
  let applied: EventItem<Type>[]
  let failure: { failedAt: number; error: unknown; delivery: Delivery } | undefined
  // the delivery span of each event whose handler ran, by offset; ended once its outcome is known
  const deliveries = new Map<string, Delivery>()
  try {
    applied = await transaction(options.sql, async (tx) => {
      const fresh = await recordManyInInbox(tx, {
        group: options.group,
        topic: handling.topic,
        eventIds: items.map(({ event }) => event.id),
      })
      const done: EventItem<Type>[] = []
      for (const [index, item] of items.entries()) {
        // delete: an event delivered twice in the same batch is applied once
        if (!fresh.delete(item.event.id)) continue
        const delivery = startDelivery(handling, topic, partition, item.message, 1)
        describeDelivery(delivery.span, item.event)
        deliveries.set(item.message.offset, delivery)
        try {
          await context.with(delivery.context, () =>
            runHandler(options, item.event, tx, contextOf(item.message)),
          )
        } catch (error) {
          recordFailure(delivery.span, error)
          failure = { failedAt: index, error, delivery }
          throw error
        }
        done.push(item)
      }
      return done
    })
  } catch (error) {
    // the failing handler's span stays open for its retry; the others' events are applied again, in new spans
    for (const delivery of deliveries.values()) if (delivery !== failure?.delivery) delivery.span.end()
    if (isDatabaseUnavailable(error)) {
      failure?.delivery.span.end()
      throw error
    }
    return failure ?? 'split'
  }
  try {
    await afterApplied(handling, topic, partition, items, applied, deliveries)
  } finally {
    for (const delivery of deliveries.values()) delivery.span.end()
  }
  return 'done'
}

/** After a shared transaction committed: skipped duplicates logged, the metric, and afterCommit in each event's span. */
async function afterApplied<Type extends EventType>(
  handling: BatchHandling<Type>,
  topic: string,
  partition: number,
  items: EventItem<Type>[],
  applied: EventItem<Type>[],
  deliveries: Map<string, Delivery>,
): Promise<void> {
  const { options } = handling
  if (applied.length < items.length) {
    const appliedOffsets = new Set(applied.map(({ message }) => message.offset))
    for (const { message, event } of items) {
      if (appliedOffsets.has(message.offset)) continue
      logSkipped(handling, event, topic, partition, message)
    }
  }
  if (applied.length > 0)
    options.metrics?.consumed.inc({ topic: handling.topic, group: options.group }, applied.length)
  const { afterCommit } = options
  if (afterCommit) {
    for (const { message, event } of applied) {
      const consumed = consumeContextOf(message, { topic, partition, offset: message.offset, attempt: 1 })
      const delivery = deliveries.get(message.offset)
      await (delivery
        ? context.with(delivery.context, () => afterCommit(event, consumed))
        : afterCommit(event, consumed))
    }
  }
}

/**
 * Applies one message, of the event topic or a retry topic, in its own transaction with its inbox record; a message
 * that is not an event, or whose handler throws, is handed to the retry routing.
 */
export async function applyMessage<Type extends EventType>(
  handling: BatchHandling<Type>,
  topic: string,
  partition: number,
  message: KafkaMessage,
): Promise<MessageOutcome> {
  const { options } = handling
  const level = topic === handling.topic ? 0 : retryLevelOf(topic)
  if (level > 0) {
    // another group's retry: that group's consumer acts on it
    if (!isOwnRetry(options.group, message)) return 'done'
    const waitMs = retryWaitMs(message)
    // Retries of one level are due in the order they were written, so this message waits at its partition's head
    // while every other partition and topic keeps flowing.
    if (waitMs > 0) return { waitMs }
  }

  const delivery = startDelivery(handling, topic, partition, message, level + 1)
  try {
    return await context.with(delivery.context, () =>
      applyDelivered(handling, topic, partition, message, level, delivery.span),
    )
  } catch (error) {
    recordFailure(delivery.span, error)
    throw error
  } finally {
    delivery.span.end()
  }
}

/** applyMessage for a message that is this consumer's to apply now, inside its delivery span. */
async function applyDelivered<Type extends EventType>(
  handling: BatchHandling<Type>,
  topic: string,
  partition: number,
  message: KafkaMessage,
  level: number,
  span: Span,
): Promise<MessageOutcome> {
  const { options, routing } = handling
  let event: CatalogueEvent<Type>
  try {
    event = parseConsumed(options, message.value)
  } catch (error) {
    if (!(error instanceof InvalidEventError)) throw error
    recordFailure(span, error)
    await routeInvalidEvent(routing, message, error, level)
    return 'done'
  }
  describeDelivery(span, event)

  const context = consumeContextOf(message, { topic, partition, offset: message.offset, attempt: level + 1 })
  let processed: boolean
  try {
    processed = await transaction(options.sql, async (tx) => {
      const isNew = await recordInInbox(tx, {
        group: options.group,
        eventId: event.id,
        topic: handling.topic,
      })
      if (!isNew) return false
      await runHandler(options, event, tx, context)
      return true
    })
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error
    recordFailure(span, error)
    await routeFailedEvent(routing, { message, event, level, error })
    return 'done'
  }

  if (!processed) {
    if (span.isRecording()) span.setAttribute('meridian.inbox.duplicate', true)
    logSkipped(handling, event, topic, partition, message)
    return 'done'
  }
  options.metrics?.consumed.inc({ topic: handling.topic, group: options.group })
  if (options.afterCommit) await options.afterCommit(event, context)
  return 'done'
}

/** Starts the `<topic> process` span of one delivery, continuing the trace its headers carry. */
function startDelivery<Type extends EventType>(
  handling: BatchHandling<Type>,
  topic: string,
  partition: number,
  message: KafkaMessage,
  attempt: number,
): Delivery {
  return startDeliverySpan({
    eventTopic: handling.topic,
    topic,
    partition,
    offset: message.offset,
    group: handling.options.group,
    attempt,
    headers: message.headers,
    key: message.key,
  })
}

function logSkipped<Type extends EventType>(
  handling: BatchHandling<Type>,
  event: DomainEvent,
  topic: string,
  partition: number,
  message: KafkaMessage,
): void {
  handling.options.logger.debug(
    { eventId: event.id, topic, partition, offset: message.offset, group: handling.options.group },
    'event already processed by this group; skipped',
  )
}

/**
 * The event in a message value; InvalidEventError when it is not one. Validated: an envelope of the consumer's
 * type whose data matches the type's schema. Not validated: any envelope, taken on the producer's word.
 */
export function parseConsumed<Type extends EventType>(
  options: ConsumeOptions<Type>,
  value: Buffer | null,
): CatalogueEvent<Type> {
  // Without validation nothing backs the handler's type but the producer: the cast is that promise, documented.
  if (options.validate === false) return parseLoosely(value) as CatalogueEvent<Type>
  const event = parseEvent(value)
  if (event.type !== options.type) {
    throw new InvalidEventError(`event type '${event.type}' on a consumer of '${options.type}'`)
  }
  // parseEvent checked the data against the schema of event.type, which is Type
  return event as CatalogueEvent<Type>
}

function parseOrUndefined<Type extends EventType>(
  options: ConsumeOptions<Type>,
  message: KafkaMessage,
): CatalogueEvent<Type> | undefined {
  try {
    return parseConsumed(options, message.value)
  } catch (error) {
    if (error instanceof InvalidEventError) return undefined
    throw error
  }
}

/** With validation off: JSON with a string id and type is enough. */
function parseLoosely(value: Buffer | null): DomainEvent {
  if (value === null) throw new InvalidEventError('empty message')
  let parsed: unknown
  try {
    parsed = JSON.parse(value.toString('utf8'))
  } catch {
    throw new InvalidEventError('message value is not JSON')
  }
  const candidate = parsed as Partial<DomainEvent> | null
  if (typeof candidate?.id !== 'string' || typeof candidate.type !== 'string') {
    throw new InvalidEventError('not an event envelope: id and type are required')
  }
  return candidate as DomainEvent
}

/** Where a message came from, with the process stamps its headers carry (a malformed one is ignored). */
function consumeContextOf(message: KafkaMessage, where: ConsumeContext): ConsumeContext {
  const command = stampIn(message.headers, ProcessHeader.command)
  const answerTo = stampIn(message.headers, ProcessHeader.answer)
  return { ...where, ...(command ? { command } : {}), ...(answerTo ? { answerTo } : {}) }
}

/** The handler, run so that the events it appends answer the message's command, if it is one. */
function runHandler<Type extends EventType>(
  options: BatchHandling<Type>['options'],
  event: CatalogueEvent<Type>,
  tx: TransactionSql,
  consumed: ConsumeContext,
): Promise<void> {
  return inAnswerTo(consumed.command, () => options.handler(event, tx, consumed))
}
