// What a consumer is given: its options and handler, and the context each handled message comes with. Kept apart from
// the runner (consumer.ts) so that the batch handling (consumer-batch.ts) it composes can read them without a cycle.
import type { EventType } from '@meridian/contracts'
import type { Sql, TransactionSql } from '@meridian/db'
import type { Kafka } from 'kafkajs'
import type { ConsumerLogger } from './consumer-logger.ts'
import type { DeadLetterHook } from './dead-letter.ts'
import type { CatalogueEvent } from './envelope.ts'
import type { EventMetrics } from './event-metrics.ts'
import type { EventProducer } from './kafka.ts'
import type { ProcessStamp } from './process-stamp.ts'

/** Where the message in hand came from. */
export interface ConsumeContext {
  /** the topic the message was read from: the event's topic, or one of its retry topics */
  topic: string
  partition: number
  offset: string
  /** 1 on the first delivery, n + 1 when the event comes from retry topic n */
  attempt: number
  /**
   * the message is a process's command (its `process` header): the events the handler appends answer it, carrying
   * the stamp back by themselves (process-stamp.ts)
   */
  command?: ProcessStamp
  /** the message answers a process's command (its `process-answer` header): the process manager routes it by this */
  answerTo?: ProcessStamp
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

/** A batch in hand, as the process's fatal log line names it (the kit's work context: `during`). */
export interface BatchWork {
  kind: 'messages'
  /** the consumer's group (its inbox's) */
  consumer: string
  topic: string
  partition: number
  /** the batch's first and last offsets, `first-last` */
  offsets: string
}

/** Runs a batch's handling as its work (the kit's withWork): whatever it starts, awaited or not, is that batch's. */
export type BatchWorkRunner = <Result>(work: BatchWork, run: () => Result) => Result

/**
 * What one consumed event type needs of its own within a consumer: its type, topic, handler and failure handling.
 * A service's consumer reads several such types in one Kafka group (consumeTypes).
 */
export interface TypeConsumption<Type extends EventType> {
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
  handler: EventHandler<NoInfer<Type>>
  /** the alert hook, called for every dead-lettered event */
  onDeadLetter?: DeadLetterHook
  /** delay before each retry; its length is the number of retries. Default 1000, 5000, 15000 ms (the spec's) */
  retryDelaysMs?: readonly number[]
  /**
   * Check each envelope, its type (it must be `type`) and its data against the catalogue; default true. When false
   * only a string id and type are required: the handler's event type is then the producer's promise, not checked.
   */
  validate?: boolean
  /**
   * Where a group without a committed offset starts on the event topic; default true (the beginning), so that
   * nothing published before the group's first commit is missed: the inbox makes the replay harmless. Retry topics
   * are always read from the beginning.
   */
  fromBeginning?: boolean
  /**
   * Most events of one partition applied in one transaction (with one inbox insert for all of them); default 100.
   * When a handler throws, that transaction is rolled back and its events are applied again one per transaction,
   * so only the failing event is retried. 1 gives one transaction per event.
   */
  maxEventsPerTransaction?: number
  /**
   * Runs after an event's transaction committed and before its offset is committed, e.g. to push a notification
   * that must follow the commit. If it throws, the partition is held and the events of that transaction come again;
   * the inbox skips them (afterCommit is not called twice for an event).
   */
  afterCommit?: (event: CatalogueEvent<NoInfer<Type>>, context: ConsumeContext) => void | Promise<void>
}

/** A consumed type of any one catalogue type: a list of them holds several types, each keeping its handler's type. */
export type AnyTypeConsumption<Types extends EventType = EventType> = {
  [Type in Types]: TypeConsumption<Type>
}[Types]

/** What the Kafka consumer of a group needs, whatever types it reads. */
export interface GroupConsumeOptions {
  /** a client from createKafka() */
  kafka: Kafka
  /** the service's database, holding the inbox table (migrateEventTables) */
  sql: Sql
  /**
   * The consumer group: the inbox key, the `consumer-group` header of its retries, and its Kafka group (one per
   * service, whatever types it reads)
   */
  group: string
  logger: ConsumerLogger
  metrics?: EventMetrics
  /** publishes retries and dead letters; default: one of its own, closed by stop() */
  producer?: EventProducer
  /**
   * Partitions handled at the same time, over all the topics read (each partition stays sequential, so events of one
   * key keep their order); default 3 per consumed type, the partitions of every catalogue topic
   * (infra/topics.json). Each takes a database connection while it applies a batch: keep it below the service's pool.
   */
  concurrency?: number
  /** processed ids are kept this long; default 24 hours */
  inboxRetentionMs?: number
  /** how often this group's expired inbox rows are removed; default 15 minutes */
  inboxCleanupIntervalMs?: number
  /** Kafka session timeout; a consumer that died leaves the group after it. Default 30000 ms */
  sessionTimeoutMs?: number
  /** longest a fetch waits on the broker, and so how late a resumed (delayed) partition may start; default 500 ms */
  maxWaitTimeMs?: number
  /** runs each batch as its work, so an error that escapes every handler names the batch (the kit's withWork) */
  withWork?: BatchWorkRunner
}

/** A consumer of one type: the group's options and the type's (consume). */
export interface ConsumeOptions<Type extends EventType> extends GroupConsumeOptions, TypeConsumption<Type> {}

/** A consumer of several types in one Kafka group (consumeTypes): a service's consumer. */
export interface ConsumeTypesOptions extends GroupConsumeOptions {
  /** the types read, each on its own topic (two types on one topic are refused) */
  types: readonly AnyTypeConsumption[]
}
