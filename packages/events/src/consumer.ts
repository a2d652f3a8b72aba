// The consumer runner: each event is handled in one transaction with its inbox record; failures go to retry topics.
import type { EventType } from '@meridian/contracts'
import { isDatabaseUnavailable, type Sql, type TransactionSql, transaction } from '@meridian/db'
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs'
import type { ConsumerLogger } from './consumer-logger.ts'
import { type DeadLetterHook, type DeadLetterTarget, sendToDeadLetters } from './dead-letter.ts'
import { type CatalogueEvent, type DomainEvent, InvalidEventError, parseEvent } from './envelope.ts'
import type { EventMetrics } from './event-metrics.ts'
import { cleanInbox, defaultInboxRetentionMs, recordInInbox, recordManyInInbox } from './inbox.ts'
import { createEventProducer, type EventProducer, headerText } from './kafka.ts'
import {
  carriedHeaders,
  defaultRetryDelaysMs,
  errorMessageOf,
  RetryHeader,
  retryLevelOf,
  retryTopicOf,
} from './retry.ts'

/** Where the message in hand came from. */
export interface ConsumeContext {
  /** the topic the message was read from: the event's topic, or one of its retry topics */
  topic: string
  partition: number
  offset: string
  /** 1 on the first delivery, n + 1 when the event comes from retry topic n */
  attempt: number
}

/**
 * Applies one event of `Type`. It runs inside the transaction that records the event in the inbox: write the effect
 * through `tx` only, so that effect and record commit together. Throwing rolls both back and schedules a retry.
 *
 * A handler written for one type does not compile as the handler of another; one that takes any `DomainEvent` fits
 * every type.
 */
export type EventHandler<Type extends EventType> = (
  event: CatalogueEvent<Type>,
  tx: TransactionSql,
  context: ConsumeContext,
) => Promise<void>

export interface ConsumeOptions<Type extends EventType> {
  /** a client from createKafka() */
  kafka: Kafka
  /** the service's database, holding the inbox table (migrateEventTables) */
  sql: Sql
  /**
   * The catalogue event type consumed: it decides the data type the handler receives and, by default, the topic
   * (topic = event type). A name outside the catalogue does not compile. With validation on (the default), an event
   * of another type is dead-lettered as invalid, so the handler only ever sees this type.
   */
  type: Type
  /**
   * The topic read instead of `type`: for isolation (tests and benchmarks use topics of their own), not for services,
   * whose topic is their event type. Its retry topics `{topic}.retry.{n}` and `{topic}.dlt` derive from it and must
   * exist. Default: `type`.
   */
  topic?: string
  /**
   * The consumer group: the inbox key, the `consumer-group` header of its retries, and the stem of its Kafka group
   * (see kafkaGroupIdOf)
   */
  group: string
  handler: EventHandler<NoInfer<Type>>
  logger: ConsumerLogger
  metrics?: EventMetrics
  /** the alert hook, called for every dead-lettered event */
  onDeadLetter?: DeadLetterHook
  /** delay before each retry; its length is the number of retries. Default 1000, 5000, 15000 ms (the spec's) */
  retryDelaysMs?: readonly number[]
  /**
   * Check each envelope, its type (it must be `type`) and its data against the catalogue; default true. When false
   * only a string id and type are required: the handler's event type is then the producer's promise, not checked.
   */
  validate?: boolean
  /** publishes retries and dead letters; default: one of its own, closed by stop() */
  producer?: EventProducer
  /**
   * Where a group without a committed offset starts on the event topic; default true (the beginning), so that
   * nothing published before the group's first commit is missed: the inbox makes the replay harmless. Retry topics
   * are always read from the beginning.
   */
  fromBeginning?: boolean
  /**
   * Partitions handled at the same time (each partition stays sequential, so events of one key keep their order);
   * default 3, the partitions of every catalogue topic (infra/topics.json). Each takes a database connection while
   * it applies a batch: keep the service's consumers' sum below its pool.
   */
  concurrency?: number
  /**
   * Most events of one partition applied in one transaction (with one inbox insert for all of them); default 100.
   * When a handler throws, that transaction is rolled back and its events are applied again one per transaction,
   * so only the failing event is retried. 1 gives one transaction per event.
   */
  maxEventsPerTransaction?: number
  /** processed ids are kept this long; default 24 hours */
  inboxRetentionMs?: number
  /** how often this group's expired inbox rows are removed; default 15 minutes */
  inboxCleanupIntervalMs?: number
  /** Kafka session timeout; a consumer that died leaves the group after it. Default 30000 ms */
  sessionTimeoutMs?: number
  /** longest a fetch waits on the broker, and so how late a resumed (delayed) partition may start; default 500 ms */
  maxWaitTimeMs?: number
  /**
   * Runs after an event's transaction committed and before its offset is committed, e.g. to push a notification
   * that must follow the commit. If it throws, the partition is held and the events of that transaction come again;
   * the inbox skips them (afterCommit is not called twice for an event).
   */
  afterCommit?: (event: CatalogueEvent<NoInfer<Type>>, context: ConsumeContext) => void | Promise<void>
}

/**
 * The Kafka group of a consumer of `topic` in `group`: one per consumed topic (`<group>.<topic>`). A service's
 * consumers of different topics cannot share one Kafka group: kafkajs' group leader assigns only the topics it
 * subscribed to itself, so the other members' topics would go unread (kafkajs#1679). Instances of one service still
 * share each topic's group and divide its partitions. The inbox keeps `group` (an event applied once per service).
 */
export const kafkaGroupIdOf = (group: string, topic: string): string => `${group}.${topic}`

/** Partitions a consumer handles at the same time unless told: the catalogue topics' partitions. */
export const defaultConsumerConcurrency = 3

/** A running consumer. */
export interface EventConsumer {
  readonly topic: string
  readonly group: string
  /** its Kafka consumer group: kafkaGroupIdOf(group, topic) */
  readonly kafkaGroupId: string
  /** what it reads: the event topic and its retry topics */
  readonly topics: readonly string[]
  /** finishes the message in hand, leaves the group, and closes the producer it opened itself */
  stop(): Promise<void>
}

type Outcome = 'done' | 'held'

/**
 * What a fetched batch is worked through as: consecutive valid events of the event topic applied together, and
 * single messages (retries, which may have to wait, and messages that do not parse).
 */
type Run<Type extends EventType> =
  | { kind: 'events'; items: EventItem<Type>[] }
  | { kind: 'message'; message: KafkaMessage }
  /** an event whose handler threw inside a shared transaction: straight to its retry, not run a second time */
  | { kind: 'failed'; item: EventItem<Type>; error: unknown }

interface EventItem<Type extends EventType> {
  message: KafkaMessage
  event: CatalogueEvent<Type>
}

/** How a shared transaction ended when it did not commit: which handler threw, or that something else failed. */
type EventsOutcome = Outcome | { failedAt: number; error: unknown } | 'split'

const firstMessageOf = (run: Run<EventType>): KafkaMessage =>
  run.kind === 'message'
    ? run.message
    : run.kind === 'failed'
      ? run.item.message
      : (run.items[0] as EventItem<EventType>).message
const lastMessageOf = (run: Run<EventType>): KafkaMessage =>
  run.kind === 'message'
    ? run.message
    : run.kind === 'failed'
      ? run.item.message
      : (run.items.at(-1) as EventItem<EventType>).message

/** Offsets are committed at the end of each batch, and at least this often within a long one. */
const commitIntervalMs = 1000
/** Backoff while the database or Kafka cannot take the outcome of a message: 0.5 s doubling up to 30 s. */
const holdBackoffMs = (failures: number) => Math.min(30_000, 500 * 2 ** (failures - 1))

/**
 * Consumes the events of `type` (from the topic `type`, or `topic`) as `group`, exactly once in effect: each event
 * runs `handler` in a transaction together with an inbox insert keyed by (group, event id), so a redelivered event is
 * skipped; offsets are committed only after that transaction committed, or after a failed event was handed to its
 * retry or dead-letter topic. Events of one key keep their order (a partition is handled sequentially). Consecutive
 * events of a partition share a transaction (up to `maxEventsPerTransaction`): one commit instead of one per event is
 * what lets a consumer keep up with thousands of events a second; a failing handler makes its batch fall back to one
 * transaction per event.
 *
 * A handler that throws sends the event to `{topic}.retry.1`, due after the first delay; the same consumer reads the
 * retry topics (acting only on its own group's retries), waits for each retry to be due by pausing that partition
 * alone, and runs it again: after the last retry it goes to `{topic}.dlt`. An event that can never succeed (not
 * JSON, not an envelope, an unknown type, another type than `type`, or bad data) goes straight to `{topic}.dlt`.
 * Every dead letter raises an alert: an error log, the deadLettered metric and `onDeadLetter`.
 *
 * Resolves once the consumer has joined its group.
 */
export async function consume<Type extends EventType>(options: ConsumeOptions<Type>): Promise<EventConsumer> {
  const ownProducer = options.producer === undefined
  const producer = options.producer ?? (await createEventProducer(options.kafka))
  const runner = new ConsumerRunner(options, producer)
  try {
    await runner.start()
  } catch (error) {
    await runner.stop().catch(() => {})
    if (ownProducer) await producer.disconnect().catch(() => {})
    throw error
  }
  let stopped: Promise<void> | undefined
  return {
    topic: runner.topic,
    group: options.group,
    kafkaGroupId: runner.kafkaGroupId,
    topics: runner.topics,
    stop() {
      stopped ??= (async () => {
        await runner.stop()
        if (ownProducer) await producer.disconnect()
      })()
      return stopped
    },
  }
}

class ConsumerRunner<Type extends EventType> {
  /** the event topic: `topic`, or the event type */
  readonly topic: string
  readonly kafkaGroupId: string
  readonly topics: readonly string[]
  private readonly consumer: Consumer
  private readonly retryDelaysMs: readonly number[]
  private readonly deadLetters: DeadLetterTarget
  private readonly resumeTimers = new Map<string, NodeJS.Timeout>()
  /** consecutive infrastructure failures per topic-partition, for the hold backoff */
  private readonly failures = new Map<string, number>()
  private cleanupTimer: NodeJS.Timeout | undefined
  private cleaning: Promise<void> = Promise.resolve()
  private stopping: Promise<void> | undefined

  constructor(
    private readonly options: ConsumeOptions<Type>,
    private readonly producer: EventProducer,
  ) {
    this.retryDelaysMs = options.retryDelaysMs ?? defaultRetryDelaysMs
    const topic = options.topic ?? options.type
    this.topic = topic
    this.topics = [topic, ...this.retryDelaysMs.map((_, i) => retryTopicOf(topic, i + 1))]
    const sessionTimeout = options.sessionTimeoutMs ?? 30_000
    this.kafkaGroupId = kafkaGroupIdOf(options.group, topic)
    this.consumer = options.kafka.consumer({
      groupId: this.kafkaGroupId,
      sessionTimeout,
      heartbeatInterval: Math.min(3000, Math.floor(sessionTimeout / 3)),
      maxWaitTimeInMs: options.maxWaitTimeMs ?? 500,
      allowAutoTopicCreation: false,
    })
    this.deadLetters = {
      producer,
      group: options.group,
      logger: options.logger,
      metrics: options.metrics,
      onDeadLetter: options.onDeadLetter,
    }
  }

  async start(): Promise<void> {
    const { consumer, options } = this
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      options.logger.error(
        { err: payload.error, group: options.group, topic: this.topic, restart: payload.restart },
        payload.restart ? 'event consumer crashed; restarting' : 'event consumer crashed and stopped',
      )
    })
    await consumer.connect()
    await consumer.subscribe({ topics: [this.topic], fromBeginning: options.fromBeginning ?? true })
    const retryTopics = this.topics.slice(1)
    if (retryTopics.length > 0) await consumer.subscribe({ topics: retryTopics, fromBeginning: true })

    const joined = new Promise<void>((resolve, reject) => {
      const removers = [
        consumer.on(consumer.events.GROUP_JOIN, () => {
          for (const remove of removers) remove()
          resolve()
        }),
        consumer.on(consumer.events.CRASH, ({ payload }) => {
          if (payload.restart) return
          for (const remove of removers) remove()
          reject(payload.error)
        }),
      ]
    })
    await consumer.run({
      autoCommit: false,
      // a held message and those after it must be fetched again, not skipped
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.concurrency ?? defaultConsumerConcurrency,
      eachBatch: (payload) => this.onBatch(payload),
    })
    await joined

    this.cleaning = this.cleanInbox()
    this.cleanupTimer = setInterval(
      () => {
        this.cleaning = this.cleaning.then(() => this.cleanInbox())
      },
      options.inboxCleanupIntervalMs ?? 15 * 60_000,
    )
    this.cleanupTimer.unref()
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.cleanupTimer)
      for (const timer of this.resumeTimers.values()) clearTimeout(timer)
      this.resumeTimers.clear()
      await this.consumer.disconnect()
      await this.cleaning
    })()
    return this.stopping
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload
    const { topic, partition } = batch
    // the payload's commit, unlike consumer.commitOffsets, still works while stop() waits for this batch
    const commit = (offset: string) => this.commit(payload, topic, partition, offset)
    const key = `${topic}|${partition}`
    let toCommit: string | undefined
    let committedAt = Date.now()
    const runs = this.runsOf(topic, batch.messages)
    for (let i = 0; i < runs.length; i++) {
      if (!isRunning() || isStale() || this.stopping) break
      const run = runs[i] as Run<Type>
      let outcome: EventsOutcome
      try {
        if (run.kind === 'events') outcome = await this.handleEvents(topic, partition, run.items)
        else if (run.kind === 'failed') {
          await this.handlerFailed(run.item.message, run.item.event, 0, run.error)
          outcome = 'done'
        } else outcome = await this.handleMessage(topic, partition, run.message)
        this.failures.delete(key)
      } catch (error) {
        // The database or Kafka could not take the outcome: not the event's fault, so no retry is spent on it.
        const failures = (this.failures.get(key) ?? 0) + 1
        this.failures.set(key, failures)
        const delayMs = holdBackoffMs(failures)
        const offset = firstMessageOf(run).offset
        this.options.logger.warn(
          { err: error, topic, partition, offset, group: this.options.group, retryInMs: delayMs },
          'could not process message; its partition is held and it will be read again',
        )
        this.hold(topic, partition, offset, delayMs)
        outcome = 'held'
      }
      if (outcome === 'held') break
      if (typeof outcome === 'object' && run.kind === 'events') {
        // One handler threw and rolled the others back with it: those before it are applied again together, it goes
        // to its retry (its handler is not run twice for one delivery), and those after it follow.
        const { failedAt, error } = outcome
        const before = run.items.slice(0, failedAt)
        const after = run.items.slice(failedAt + 1)
        runs.splice(
          i + 1,
          0,
          ...(before.length > 0 ? [{ kind: 'events' as const, items: before }] : []),
          { kind: 'failed', item: run.items[failedAt] as EventItem<Type>, error },
          ...(after.length > 0 ? [{ kind: 'events' as const, items: after }] : []),
        )
        continue
      }
      if (outcome === 'split' && run.kind === 'events') {
        // the transaction failed for another reason than a handler: apply the events one by one
        runs.splice(i + 1, 0, ...run.items.map(({ message }) => ({ kind: 'message' as const, message })))
        continue
      }
      const last = lastMessageOf(run)
      resolveOffset(last.offset)
      toCommit = (BigInt(last.offset) + 1n).toString()
      if (Date.now() - committedAt >= commitIntervalMs) {
        await commit(toCommit)
        toCommit = undefined
        committedAt = Date.now()
      }
      await heartbeat()
    }
    if (toCommit !== undefined) await commit(toCommit)
  }

  /** Groups consecutive valid events of the event topic, up to maxEventsPerTransaction; the rest go one by one. */
  private runsOf(topic: string, messages: KafkaMessage[]): Run<Type>[] {
    const { options } = this
    const most = options.maxEventsPerTransaction ?? 100
    const runs: Run<Type>[] = []
    let open: Extract<Run<Type>, { kind: 'events' }> | undefined
    for (const message of messages) {
      const event = topic === this.topic && most > 1 ? this.parseOrUndefined(message) : undefined
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

  private parseOrUndefined(message: KafkaMessage): CatalogueEvent<Type> | undefined {
    try {
      return this.parse(message.value)
    } catch (error) {
      if (error instanceof InvalidEventError) return undefined
      throw error
    }
  }

  /**
   * Applies events of the event topic in one transaction with one inbox insert. When it rolls back: which handler
   * threw, or 'split' for any other failure; a thrown error when the database is unavailable.
   */
  private async handleEvents(
    topic: string,
    partition: number,
    items: EventItem<Type>[],
  ): Promise<EventsOutcome> {
    const { options } = this
    const contextOf = (message: KafkaMessage): ConsumeContext => ({
      topic,
      partition,
      offset: message.offset,
      attempt: 1,
    })
    let applied: EventItem<Type>[]
    let failure: { failedAt: number; error: unknown } | undefined
    try {
      applied = await transaction(options.sql, async (tx) => {
        const fresh = await recordManyInInbox(tx, {
          group: options.group,
          topic: this.topic,
          eventIds: items.map(({ event }) => event.id),
        })
        const done: EventItem<Type>[] = []
        for (const [index, item] of items.entries()) {
          // delete: an event delivered twice in the same batch is applied once
          if (!fresh.delete(item.event.id)) continue
          try {
            await options.handler(item.event, tx, contextOf(item.message))
          } catch (error) {
            failure = { failedAt: index, error }
            throw error
          }
          done.push(item)
        }
        return done
      })
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error
      return failure ?? 'split'
    }
    if (applied.length < items.length) {
      const appliedOffsets = new Set(applied.map(({ message }) => message.offset))
      for (const { message, event } of items) {
        if (appliedOffsets.has(message.offset)) continue
        options.logger.debug(
          { eventId: event.id, topic, partition, offset: message.offset, group: options.group },
          'event already processed by this group; skipped',
        )
      }
    }
    if (applied.length > 0)
      options.metrics?.consumed.inc({ topic: this.topic, group: options.group }, applied.length)
    if (options.afterCommit) {
      for (const { message, event } of applied) await options.afterCommit(event, contextOf(message))
    }
    return 'done'
  }

  private async handleMessage(topic: string, partition: number, message: KafkaMessage): Promise<Outcome> {
    const { options } = this
    const level = topic === this.topic ? 0 : retryLevelOf(topic)
    if (level > 0) {
      const owner = headerText(message.headers, RetryHeader.consumerGroup)
      if (owner !== options.group) {
        // another group's retry: that group's consumer acts on it
        return 'done'
      }
      const waitMs = Number(headerText(message.headers, RetryHeader.dueAt) ?? 0) - Date.now()
      if (waitMs > 0) {
        // Retries of one level are due in the order they were written, so this message waits at its partition's head
        // while every other partition and topic keeps flowing.
        this.hold(topic, partition, message.offset, waitMs)
        return 'held'
      }
    }

    let event: CatalogueEvent<Type>
    try {
      event = this.parse(message.value)
    } catch (error) {
      if (!(error instanceof InvalidEventError)) throw error
      await sendToDeadLetters(this.deadLetters, {
        message,
        topic: this.topic,
        reason: 'invalid-event',
        errorMessage: error.message,
        retries: level,
      })
      return 'done'
    }

    const context: ConsumeContext = { topic, partition, offset: message.offset, attempt: level + 1 }
    let processed: boolean
    try {
      processed = await transaction(options.sql, async (tx) => {
        const isNew = await recordInInbox(tx, {
          group: options.group,
          eventId: event.id,
          topic: this.topic,
        })
        if (!isNew) return false
        await options.handler(event, tx, context)
        return true
      })
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error
      await this.handlerFailed(message, event, level, error)
      return 'done'
    }

    if (!processed) {
      options.logger.debug(
        { eventId: event.id, topic, partition, offset: message.offset, group: options.group },
        'event already processed by this group; skipped',
      )
      return 'done'
    }
    options.metrics?.consumed.inc({ topic: this.topic, group: options.group })
    if (options.afterCommit) await options.afterCommit(event, context)
    return 'done'
  }

  /**
   * The event in a message value; InvalidEventError when it is not one. Validated: an envelope of the consumer's
   * type whose data matches the type's schema. Not validated: any envelope, taken on the producer's word.
   */
  private parse(value: Buffer | null): CatalogueEvent<Type> {
    const { options } = this
    // Without validation nothing backs the handler's type but the producer: the cast is that promise, documented.
    if (options.validate === false) return parseLoosely(value) as CatalogueEvent<Type>
    const event = parseEvent(value)
    if (event.type !== options.type) {
      throw new InvalidEventError(`event type '${event.type}' on a consumer of '${options.type}'`)
    }
    // parseEvent checked the data against the schema of event.type, which is Type
    return event as CatalogueEvent<Type>
  }

  /** Hands a failed event to the next retry topic, or to the dead-letter topic after the last retry. */
  private async handlerFailed(message: KafkaMessage, event: DomainEvent, level: number, error: unknown) {
    const { options } = this
    const errorMessage = errorMessageOf(error)
    const retry = level + 1
    const delayMs = this.retryDelaysMs[level]
    if (delayMs === undefined) {
      await sendToDeadLetters(this.deadLetters, {
        message,
        topic: this.topic,
        reason: 'retries-exhausted',
        errorMessage,
        retries: level,
        event,
      })
      return
    }
    const dueAt = Date.now() + delayMs
    const headers = carriedHeaders(message.headers)
    await this.producer.publish([
      {
        topic: retryTopicOf(this.topic, retry),
        key: message.key?.toString() ?? '',
        value: message.value?.toString('utf8') ?? '',
        headers: {
          ...headers,
          [RetryHeader.messageId]: headers[RetryHeader.messageId] ?? event.id,
          [RetryHeader.retryCount]: String(retry),
          [RetryHeader.originalTopic]: this.topic,
          [RetryHeader.consumerGroup]: options.group,
          [RetryHeader.errorMessage]: errorMessage,
          [RetryHeader.dueAt]: String(dueAt),
        },
      },
    ])
    options.metrics?.retried.inc({ topic: this.topic, group: options.group, attempt: String(retry) })
    options.logger.warn(
      {
        err: error,
        eventId: event.id,
        eventType: event.type,
        topic: this.topic,
        group: options.group,
        retry,
        dueAt: new Date(dueAt).toISOString(),
      },
      'event handler failed; retry scheduled',
    )
  }

  /** Pauses one topic-partition, rewinds it to `offset`, and resumes it after `delayMs`; nothing else waits. */
  private hold(topic: string, partition: number, offset: string, delayMs: number) {
    this.consumer.pause([{ topic, partitions: [partition] }])
    this.consumer.seek({ topic, partition, offset })
    const key = `${topic}|${partition}`
    clearTimeout(this.resumeTimers.get(key))
    const timer = setTimeout(() => {
      this.resumeTimers.delete(key)
      if (!this.stopping) this.consumer.resume([{ topic, partitions: [partition] }])
    }, delayMs)
    timer.unref()
    this.resumeTimers.set(key, timer)
  }

  private async commit(payload: EachBatchPayload, topic: string, partition: number, offset: string) {
    try {
      await payload.commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset }] }] })
    } catch (error) {
      // Harmless for correctness: the events since the last commit are delivered again and the inbox skips them.
      this.options.logger.warn(
        { err: error, topic, partition, offset, group: this.options.group },
        'offset commit failed',
      )
    }
  }

  private async cleanInbox() {
    const { options } = this
    try {
      const removed = await cleanInbox(options.sql, {
        group: options.group,
        retentionMs: options.inboxRetentionMs ?? defaultInboxRetentionMs,
      })
      if (removed > 0)
        options.logger.debug({ group: options.group, removed }, 'expired inbox entries removed')
    } catch (error) {
      options.logger.warn({ err: error, group: options.group }, 'inbox cleanup failed')
    }
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
