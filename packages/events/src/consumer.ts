// The consumer runner: each event is handled in one transaction with its inbox record; failures go to retry topics.
// The runner owns the Kafka consumer, its partitions and offsets; what a batch does is consumer-batch.ts, where a
// failed event goes is consumer-retries.ts.
import type { EventType } from '@meridian/contracts'
import { context } from '@opentelemetry/api'
import type { Consumer, EachBatchPayload } from 'kafkajs'
import type { ConsumeContext, ConsumeOptions, EventHandler } from './consume-options.ts'
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

export type { ConsumeContext, ConsumeOptions, EventHandler }

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

/** Runs one consumer: joins its group, works through each fetched batch in order, holds and resumes partitions. */
class ConsumerRunner<Type extends EventType> {
  /** the event topic: `topic`, or the event type */
  readonly topic: string
  readonly kafkaGroupId: string
  readonly topics: readonly string[]
  private readonly consumer: Consumer
  private readonly handling: BatchHandling<Type>
  private readonly holds: PartitionHolds
  /** consecutive infrastructure failures per topic-partition, for the hold backoff */
  private readonly failures = new Map<string, number>()
  private inboxCleanup: InboxCleanup | undefined
  private stopping: Promise<void> | undefined

  constructor(
    private readonly options: ConsumeOptions<Type>,
    producer: EventProducer,
  ) {
    const retryDelaysMs = options.retryDelaysMs ?? defaultRetryDelaysMs
    const topic = options.topic ?? options.type
    this.topic = topic
    this.topics = [topic, ...retryDelaysMs.map((_, i) => retryTopicOf(topic, i + 1))]
    this.kafkaGroupId = kafkaGroupIdOf(options.group, topic)
    this.consumer = createGroupConsumer(options, this.kafkaGroupId)
    this.holds = new PartitionHolds(this.consumer)
    const routing: FailureRouting = {
      topic,
      retryDelaysMs,
      producer,
      group: options.group,
      logger: options.logger,
      metrics: options.metrics,
      onDeadLetter: options.onDeadLetter,
    }
    this.handling = { options, topic, routing }
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

    const joined = groupJoined(consumer)
    await consumer.run({
      autoCommit: false,
      // a held message and those after it must be fetched again, not skipped
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: options.concurrency ?? defaultConsumerConcurrency,
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
    // the payload's commit, unlike consumer.commitOffsets, still works while stop() waits for this batch
    const commit = (offset: string) => commitOffset(payload, this.options, topic, partition, offset)
    let toCommit: string | undefined
    let committedAt = Date.now()
    const runs = runsOf(this.handling, topic, batch.messages)
    for (let i = 0; i < runs.length; i++) {
      if (!isRunning() || isStale() || this.stopping) break
      const run = runs[i] as Run<Type>
      const outcome = await this.applyRun(topic, partition, run)
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
  private async applyRun(topic: string, partition: number, run: Run<Type>): Promise<EventsOutcome | 'held'> {
    const key = `${topic}|${partition}`
    let outcome: EventsOutcome | 'held'
    try {
      if (run.kind === 'events') outcome = await applyEvents(this.handling, topic, partition, run.items)
      else if (run.kind === 'failed') {
        const { message, event } = run.item
        const { delivery } = run
        try {
          // told in the failed delivery's span: its retry event, and the retry message continues from it
          await context.with(delivery.context, () =>
            routeFailedEvent(this.handling.routing, { message, event, level: 0, error: run.error }),
          )
        } finally {
          delivery.span.end()
        }
        outcome = 'done'
      } else {
        const applied = await applyMessage(this.handling, topic, partition, run.message)
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
        { err: error, topic, partition, offset, group: this.options.group, retryInMs: delayMs },
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
function createGroupConsumer<Type extends EventType>(
  options: ConsumeOptions<Type>,
  groupId: string,
): Consumer {
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
 * rebalances of the ~25 groups stalled the saga for ~30 s on a three-broker cluster (docs/scaling-out.md). Producers
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

async function commitOffset<Type extends EventType>(
  payload: EachBatchPayload,
  options: ConsumeOptions<Type>,
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
      ConsumeOptions<EventType>,
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
