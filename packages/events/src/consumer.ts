// The consumer runner: one Kafka consumer per group (a service's instance) for every type it reads; each event is
// handled in one transaction with its inbox record; failures go to retry topics. The runner owns the Kafka consumer,
// its partitions and offsets, and sends each message to its topic's type; what a batch does is consumer-batch.ts, where a
// failed event goes is consumer-retries.ts.
import type { EventType } from '@meridian/contracts'
import { context } from '@opentelemetry/api'
import type { Consumer, EachBatchPayload } from 'kafkajs'
import type {
  AnyTypeConsumption,
  ConsumeContext,
  ConsumeOptions,
  ConsumeTypesOptions,
  EventHandler,
  GroupConsumeOptions,
} from './consume-options.ts'
import {
  applyEvents,
  applyMessage,
  type BatchHandling,
  type EventsOutcome,
  firstMessageOf,
  lastMessageOf,
  type Run,
  runsAfterRollback,
  runsOf,
} from './consumer-batch.ts'
import { type FailureRouting, routeFailedEvent } from './consumer-retries.ts'
import { cleanInbox, defaultInboxRetentionMs } from './inbox.ts'
import { createEventProducer, type EventProducer } from './kafka.ts'
import { defaultRetryDelaysMs, retryTopicOf } from './retry.ts'

export type { ConsumeContext, ConsumeOptions, ConsumeTypesOptions, EventHandler }

/** Partitions a consumer handles at the same time per type it reads, unless told: the catalogue topics' partitions. */
export const defaultConsumerConcurrency = 3

/** A running consumer. */
export interface EventConsumer {
  readonly group: string
  /** its Kafka consumer group: the group itself, one for every type it reads */
  readonly kafkaGroupId: string
  /** the event topics it reads, one per type, in the order given */
  readonly eventTopics: readonly string[]
  /** what it reads: each event topic and its retry topics */
  readonly topics: readonly string[]
  /** finishes the messages in hand, leaves the group, and closes the producer it opened itself */
  stop(): Promise<void>
}

/** Offsets are committed at the end of each batch, and at least this often within a long one. */
const commitIntervalMs = 1000
/** Backoff while the database or Kafka cannot take the outcome of a message: 0.5 s doubling up to 30 s. */
const holdBackoffMs = (failures: number) => Math.min(30_000, 500 * 2 ** (failures - 1))

/**
 * Consumes the events of `type` (from the topic `type`, or `topic`) as `group`: consumeTypes with one type (tests,
 * benchmarks; a service's consumers run as one consumer of all their types).
 */
export function consume<Type extends EventType>(options: ConsumeOptions<Type>): Promise<EventConsumer> {
  // the single type's options are the group's too; a TypeConsumption<Type> is one of AnyTypeConsumption's members
  const only = options as unknown as AnyTypeConsumption
  return consumeTypes({ ...options, types: [only] })
}

/**
 * Consumes the events of each of `types` (each from its own topic: `type`, or `topic`) as `group`, in ONE Kafka group
 * named `group`: every instance of a service reads the same topics, so its instances divide the partitions of all of
 * them, with one fetch loop, one heartbeat and one rebalance per instance whatever the number of types. Each message
 * goes to its topic's type (a retry topic's to the type of its event topic).
 *
 * Exactly once in effect: each event runs its type's `handler` in a transaction together with an inbox insert keyed by
 * (group, event id), so a redelivered event is skipped; offsets are committed only after that transaction committed,
 * or after a failed event was handed to its retry or dead-letter topic. Events of one key keep their order (a
 * partition is handled sequentially). Consecutive events of a partition share a transaction (up to
 * `maxEventsPerTransaction`): one commit instead of one per event is what lets a consumer keep up with thousands of
 * events a second; a failing handler makes its batch fall back to one transaction per event.
 *
 * A handler that throws sends the event to `{topic}.retry.1`, due after the first delay; the same consumer reads the
 * retry topics (acting only on its own group's retries), waits for each retry to be due by pausing that partition
 * alone, and runs it again: after the last retry it goes to `{topic}.dlt`. An event that can never succeed (not
 * JSON, not an envelope, an unknown type, another type than its topic's, or bad data) goes straight to `{topic}.dlt`.
 * Every dead letter raises an alert: an error log, the deadLettered metric and `onDeadLetter`.
 *
 * Resolves once the consumer has joined its group.
 */
export async function consumeTypes(options: ConsumeTypesOptions): Promise<EventConsumer> {
  const ownProducer = options.producer === undefined
  const producer = options.producer ?? (await createEventProducer(options.kafka))
  let runner: ConsumerRunner | undefined
  try {
    runner = new ConsumerRunner(options, producer)
    await runner.start()
  } catch (error) {
    await runner?.stop().catch(() => {})
    if (ownProducer) await producer.disconnect().catch(() => {})
    throw error
  }
  const started = runner
  let stopped: Promise<void> | undefined
  return {
    group: options.group,
    kafkaGroupId: started.kafkaGroupId,
    eventTopics: started.eventTopics,
    topics: started.topics,
    stop() {
      stopped ??= (async () => {
        await started.stop()
        if (ownProducer) await producer.disconnect()
      })()
      return stopped
    },
  }
}

/**
 * One type's batch handling with the group's options. Stored as the handling of any type: the runner hands it only
 * messages of its own topics, and it checks each event's type (parseConsumed) before its handler sees it.
 */
function handlingOf(
  group: ConsumeTypesOptions,
  consumed: AnyTypeConsumption,
  producer: EventProducer,
): BatchHandling<EventType> {
  const options = { ...group, ...consumed } as unknown as ConsumeOptions<EventType>
  const topic = consumed.topic ?? consumed.type
  const routing: FailureRouting = {
    topic,
    retryDelaysMs: consumed.retryDelaysMs ?? defaultRetryDelaysMs,
    producer,
    group: group.group,
    logger: group.logger,
    metrics: group.metrics,
    onDeadLetter: consumed.onDeadLetter,
  }
  return { options, topic, routing }
}

/** Each topic the group reads (each type's event topic and its retry topics) to that type's handling. */
function handlingsByTopic(
  group: string,
  handlings: readonly BatchHandling<EventType>[],
): Map<string, BatchHandling<EventType>> {
  const byTopic = new Map<string, BatchHandling<EventType>>()
  for (const handling of handlings) {
    const { topic, routing } = handling
    for (const read of [topic, ...routing.retryDelaysMs.map((_, i) => retryTopicOf(topic, i + 1))]) {
      if (byTopic.has(read))
        throw new Error(`consumer group '${group}' is given two types on topic '${read}'`)
      byTopic.set(read, handling)
    }
  }
  return byTopic
}

/** What the group's consumer tells of itself that an operator must see: a crash, and topics it was given but does not read. */
function logGroupEvents(
  consumer: Consumer,
  options: ConsumeTypesOptions,
  eventTopics: readonly string[],
): void {
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    options.logger.error(
      { err: payload.error, group: options.group, topics: eventTopics, restart: payload.restart },
      payload.restart ? 'event consumer crashed; restarting' : 'event consumer crashed and stopped',
    )
  })
  // Instances of one service read the same types, except while a deployment that adds or drops a type rolls out: the
  // group's leader then divides the topics it reads itself among all the members (kafkajs#1679), and a member given a
  // topic it does not read drops it: those partitions wait until the group rebalances without the other version's
  // instances.
  consumer.on(consumer.events.RECEIVED_UNSUBSCRIBED_TOPICS, ({ payload }) => {
    options.logger.warn(
      { group: options.group, topics: payload.topicsNotSubscribed },
      'assigned topics this instance does not read: instances reading other types share the group; those partitions wait for the next rebalance',
    )
  })
}

/** Runs one consumer: joins its group, works through each fetched batch in order, holds and resumes partitions. */
class ConsumerRunner {
  readonly kafkaGroupId: string
  readonly eventTopics: readonly string[]
  readonly topics: readonly string[]
  private readonly consumer: Consumer
  /** each topic read (event topic or retry topic) to its type's handling */
  private readonly handlingByTopic: Map<string, BatchHandling<EventType>>
  private readonly handlings: BatchHandling<EventType>[]
  private readonly holds: PartitionHolds
  /** consecutive infrastructure failures per topic-partition, for the hold backoff */
  private readonly failures = new Map<string, number>()
  private inboxCleanup: InboxCleanup | undefined
  private stopping: Promise<void> | undefined

  constructor(
    private readonly options: ConsumeTypesOptions,
    producer: EventProducer,
  ) {
    if (options.types.length === 0)
      throw new Error(`consumer group '${options.group}' is given no type to read`)
    this.handlings = options.types.map((each) => handlingOf(options, each, producer))
    this.handlingByTopic = handlingsByTopic(options.group, this.handlings)
    this.eventTopics = this.handlings.map(({ topic }) => topic)
    this.topics = [...this.handlingByTopic.keys()]
    this.kafkaGroupId = options.group
    this.consumer = createGroupConsumer(options, this.kafkaGroupId)
    this.holds = new PartitionHolds(this.consumer)
  }

  async start(): Promise<void> {
    const { consumer, options } = this
    logGroupEvents(consumer, options, this.eventTopics)
    await consumer.connect()
    for (const { topic, options: typeOptions } of this.handlings)
      await consumer.subscribe({ topics: [topic], fromBeginning: typeOptions.fromBeginning ?? true })
    const retryTopics = this.topics.filter((topic) => !this.eventTopics.includes(topic))
    if (retryTopics.length > 0) await consumer.subscribe({ topics: retryTopics, fromBeginning: true })

    const joined = groupJoined(consumer)
    await consumer.run({
      autoCommit: false,
      // a held message and those after it must be fetched again, not skipped
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently:
        options.concurrency ?? defaultConsumerConcurrency * this.handlings.length,
      eachBatch: (payload) => this.onBatch(payload),
    })
    await joined
    this.inboxCleanup = new InboxCleanup(options)
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.inboxCleanup?.stopTimer()
      this.holds.stop()
      await this.consumer.disconnect()
      await this.inboxCleanup?.cleaning
    })()
    return this.stopping
  }

  /** Works through a batch run by run as its work (withWork), committing offsets as it goes; stops at a held run. */
  private onBatch(payload: EachBatchPayload): Promise<void> {
    const { withWork } = this.options
    if (withWork === undefined) return this.handleBatch(payload)
    const { topic, partition, messages } = payload.batch
    const offsets = `${messages[0]?.offset ?? ''}-${messages.at(-1)?.offset ?? ''}`
    return withWork({ kind: 'messages', consumer: this.options.group, topic, partition, offsets }, () =>
      this.handleBatch(payload),
    )
  }

  private async handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload
    const { topic, partition } = batch
    const handling = this.handlingByTopic.get(topic)
    // never: the consumer subscribed to exactly the topics of its handlings
    if (handling === undefined)
      throw new Error(`consumer group '${this.options.group}' fetched topic '${topic}'`)
    // the payload's commit, unlike consumer.commitOffsets, still works while stop() waits for this batch
    const commit = (offset: string) => commitOffset(payload, this.options, topic, partition, offset)
    let toCommit: string | undefined
    let committedAt = Date.now()
    const runs = runsOf(handling, topic, batch.messages)
    for (let i = 0; i < runs.length; i++) {
      if (!isRunning() || isStale() || this.stopping) break
      const run = runs[i] as Run<EventType>
      const outcome = await this.applyRun(handling, topic, partition, run)
      if (outcome === 'held') break
      const reruns = runsAfterRollback(run, outcome)
      if (reruns) {
        runs.splice(i + 1, 0, ...reruns)
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

  /**
   * Applies one run; 'held' when its partition now waits: for a retry to be due, or because the database or Kafka
   * could not take the outcome.
   */
  private async applyRun(
    handling: BatchHandling<EventType>,
    topic: string,
    partition: number,
    run: Run<EventType>,
  ): Promise<EventsOutcome | 'held'> {
    const key = `${topic}|${partition}`
    let outcome: EventsOutcome | 'held'
    try {
      if (run.kind === 'events') outcome = await applyEvents(handling, topic, partition, run.items)
      else if (run.kind === 'failed') {
        const { message, event } = run.item
        const { delivery } = run
        try {
          // told in the failed delivery's span: its retry event, and the retry message continues from it
          await context.with(delivery.context, () =>
            routeFailedEvent(handling.routing, { message, event, level: 0, error: run.error }),
          )
        } finally {
          delivery.span.end()
        }
        outcome = 'done'
      } else {
        const applied = await applyMessage(handling, topic, partition, run.message)
        if (applied === 'done') outcome = 'done'
        else {
          this.holds.hold(topic, partition, run.message.offset, applied.waitMs)
          outcome = 'held'
        }
      }
      this.failures.delete(key)
    } catch (error) {
      // The database or Kafka could not take the outcome: not the event's fault, so no retry is spent on it.
      const failures = (this.failures.get(key) ?? 0) + 1
      this.failures.set(key, failures)
      const delayMs = holdBackoffMs(failures)
      const offset = firstMessageOf(run).offset
      this.options.logger.warn(
        {
          err: error,
          topic,
          eventType: handling.options.type,
          partition,
          offset,
          group: this.options.group,
          retryInMs: delayMs,
        },
        'could not process message; its partition is held and it will be read again',
      )
      this.holds.hold(topic, partition, offset, delayMs)
      outcome = 'held'
    }
    return outcome
  }
}

/** Partitions paused at a message until a delay passes: a retry not yet due, or a backoff; nothing else waits. */
class PartitionHolds {
  private readonly resumeTimers = new Map<string, NodeJS.Timeout>()
  private stopped = false

  constructor(private readonly consumer: Consumer) {}

  /** Pauses one topic-partition, rewinds it to `offset`, and resumes it after `delayMs`. */
  hold(topic: string, partition: number, offset: string, delayMs: number): void {
    this.consumer.pause([{ topic, partitions: [partition] }])
    this.consumer.seek({ topic, partition, offset })
    const key = `${topic}|${partition}`
    clearTimeout(this.resumeTimers.get(key))
    const timer = setTimeout(() => {
      this.resumeTimers.delete(key)
      if (!this.stopped) this.consumer.resume([{ topic, partitions: [partition] }])
    }, delayMs)
    timer.unref()
    this.resumeTimers.set(key, timer)
  }

  /** The consumer is stopping: no partition is resumed any more. */
  stop(): void {
    this.stopped = true
    for (const timer of this.resumeTimers.values()) clearTimeout(timer)
    this.resumeTimers.clear()
  }
}

/** The Kafka consumer of one group; its heartbeat a third of the session timeout, at most 3 s. */
function createGroupConsumer(options: GroupConsumeOptions, groupId: string): Consumer {
  const sessionTimeout = options.sessionTimeoutMs ?? 30_000
  return options.kafka.consumer({
    groupId,
    sessionTimeout,
    heartbeatInterval: Math.min(3000, Math.floor(sessionTimeout / 3)),
    maxWaitTimeInMs: options.maxWaitTimeMs ?? 500,
    allowAutoTopicCreation: false,
    retry: consumerRetry,
  })
}

/**
 * How long a consumer tries a request again before it gives up — it then crashes and rejoins its group, which
 * rebalances every member of the group: about 20 s, from 250 ms doubling up to 5 s. A broker that dies is fenced by
 * the controller after its session timeout (9 s by default) and its partitions get new leaders; with the client's
 * budget (5 retries from 100 ms, about 3 s) every consumer of the dead leader's partitions crashed first, and the
 * rebalances of the ~25 groups (a group per consumed topic then) stalled the saga for ~30 s on a three-broker cluster
 * (docs/explanation/scaling.md). Producers
 * keep the short budget: the relay leaves its rows in the outbox and tries again on its next pass.
 */
export const consumerRetry = Object.freeze({ initialRetryTime: 250, maxRetryTime: 5000, retries: 8 })

/** Resolves when the consumer joins its group; rejects if it crashes for good before. */
function groupJoined(consumer: Consumer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
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
}

async function commitOffset(
  payload: EachBatchPayload,
  options: GroupConsumeOptions,
  topic: string,
  partition: number,
  offset: string,
): Promise<void> {
  try {
    await payload.commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset }] }] })
  } catch (error) {
    // Harmless for correctness: the events since the last commit are delivered again and the inbox skips them.
    options.logger.warn(
      { err: error, topic, partition, offset, group: options.group },
      'offset commit failed',
    )
  }
}

/** Removes this group's expired inbox rows now, then every `inboxCleanupIntervalMs`, one cleanup at a time. */
class InboxCleanup {
  /** the cleanup under way, if any: stop() waits for it */
  cleaning: Promise<void>
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly options: Pick<
      GroupConsumeOptions,
      'sql' | 'group' | 'logger' | 'inboxRetentionMs' | 'inboxCleanupIntervalMs'
    >,
  ) {
    this.cleaning = this.clean()
    this.timer = setInterval(
      () => {
        this.cleaning = this.cleaning.then(() => this.clean())
      },
      options.inboxCleanupIntervalMs ?? 15 * 60_000,
    )
    this.timer.unref()
  }

  stopTimer(): void {
    clearInterval(this.timer)
  }

  private async clean(): Promise<void> {
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
