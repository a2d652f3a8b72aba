// What the consumer, retry and replay tests share: their own topics and database, events, a recording logger.
import { randomUUID } from 'node:crypto'
import { freshDatabase, infraEndpoints, scaledMs, testKafka, uniqueName, waitMs } from '@meridian/testkit'
import type { Kafka, KafkaMessage } from 'kafkajs'
import type postgres from 'postgres'
import type { ConsumerLogger } from '../src/consumer-logger.ts'
import { createEvent, type DomainEvent } from '../src/envelope.ts'
import { migrateEventTables } from '../src/event-tables.ts'
import { createKafka, type EventProducer } from '../src/kafka.ts'
import { deadLetterTopicOf, retryTopicOf } from '../src/retry.ts'

export const kafkaBrokers = (): string => infraEndpoints().kafkaBrokers

/** A client configured as services configure theirs. */
export const eventKafka = (label = 'events-test'): Kafka =>
  createKafka({ brokers: kafkaBrokers(), clientId: uniqueName(label) })

export interface EventTopics {
  topic: string
  retry(attempt: number): string
  dlt: string
  all: string[]
  delete(): Promise<void>
}

/**
 * A unique topic T with T.retry.1..3 and T.dlt, three partitions each. (freshTopics gives every name its own suffix,
 * so the retry and dead-letter names, which must derive from T, are created here.)
 */
export async function eventTopics(label = 'ev'): Promise<EventTopics> {
  const topic = uniqueName(label)
  const all = [
    topic,
    retryTopicOf(topic, 1),
    retryTopicOf(topic, 2),
    retryTopicOf(topic, 3),
    deadLetterTopicOf(topic),
  ]
  const admin = testKafka().admin()
  await admin.connect()
  try {
    await admin.createTopics({
      waitForLeaders: false,
      topics: all.map((name) => ({ topic: name, numPartitions: 3, replicationFactor: 1 })),
    })
    // kafkajs' own wait for leaders gives up on "does not host this topic-partition" while several files create
    // topics; ready means every partition has a leader that answers for its offsets
    await waitFor('leaders of the new topics', async () => {
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: all })
        if (!topics.every((t) => t.partitions.length === 3 && t.partitions.every((p) => p.leader >= 0)))
          return false
        for (const name of all) await admin.fetchTopicOffsets(name)
        return true
      } catch {
        return false
      }
    })
  } finally {
    await admin.disconnect()
  }
  return {
    topic,
    retry: (attempt) => retryTopicOf(topic, attempt),
    dlt: deadLetterTopicOf(topic),
    all,
    async delete() {
      const cleaner = testKafka().admin()
      await cleaner.connect()
      try {
        await cleaner.deleteTopics({ topics: all })
      } finally {
        await cleaner.disconnect()
      }
    },
  }
}

export interface EffectsDatabase {
  url: string
  sql: postgres.Sql
  /** how many times each event's effect was applied */
  effectCounts(): Promise<Map<string, number>>
  /** event ids in the order their effects were applied */
  appliedOrder(): Promise<{ eventId: string; key: string; appliedAt: Date }[]>
  drop(): Promise<void>
}

/** A database of its own with the outbox and inbox tables and an `effects` table that lets duplicates in. */
export async function effectsDatabase(): Promise<EffectsDatabase> {
  const db = await freshDatabase('events')
  await migrateEventTables(db.sql)
  await db.sql`
    create table effects (
      seq bigint generated always as identity primary key,
      event_id text not null,
      key text not null,
      applied_at timestamptz not null default clock_timestamp()
    )
  `
  return {
    url: db.url,
    sql: db.sql,
    async effectCounts() {
      const rows = await db.sql<{ event_id: string; n: number }[]>`
        select event_id, count(*)::int as n from effects group by event_id
      `
      return new Map(rows.map((row) => [row.event_id, row.n]))
    },
    async appliedOrder() {
      const rows = await db.sql<{ event_id: string; key: string; applied_at: Date }[]>`
        select event_id, key, applied_at from effects order by seq
      `
      return rows.map((row) => ({ eventId: row.event_id, key: row.key, appliedAt: row.applied_at }))
    },
    drop: () => db.drop(),
  }
}

/** The effect a test handler applies: one row per application, so a second application shows. */
export async function applyEffect(tx: postgres.TransactionSql, event: DomainEvent): Promise<void> {
  await tx`insert into effects (event_id, key) values (${event.id}, ${keyOf(event)})`
}

/** An event of a catalogue type: the consumer validates by the envelope's type, whatever the topic's name. */
export function orderCompleted(orderId: string = randomUUID()): DomainEvent {
  return createEvent('order.completed', { orderId }, { source: 'events-test' })
}

export const keyOf = (event: DomainEvent): string => String(event.data.orderId)

/** Publishes events as the outbox relay does: key = aggregate id, header message-id = event id. */
export async function publishEvents(
  producer: EventProducer,
  topic: string,
  events: DomainEvent[],
): Promise<void> {
  await producer.publish(
    events.map((event) => ({
      topic,
      key: keyOf(event),
      value: JSON.stringify(event),
      headers: { 'message-id': event.id },
    })),
  )
}

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error'
  msg: string | undefined
  fields: Record<string, unknown>
}

export function recordingLogger(): { logger: ConsumerLogger; entries: LogEntry[] } {
  const entries: LogEntry[] = []
  const at =
    (level: LogEntry['level']) =>
    (obj: object, msg?: string): void => {
      entries.push({ level, msg, fields: obj as Record<string, unknown> })
    }
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, entries }
}

/** Polls `check` until it returns something other than undefined/false (for the tests' scaled wait by default). */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = scaledMs(waitMs),
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const result = await check()
    if (result !== undefined && result !== false) return result
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export interface ReadMessage {
  topic: string
  partition: number
  offset: string
  key: string | undefined
  value: string | undefined
  headers: Record<string, string>
}

/** Everything currently in `topics` (read by a throwaway group up to the end offsets seen at the start). */
export async function readTopics(kafka: Kafka, topics: string[]): Promise<ReadMessage[]> {
  const admin = kafka.admin()
  await admin.connect()
  const ends = new Map<string, bigint>()
  try {
    for (const topic of topics) {
      for (const { partition, high } of await admin.fetchTopicOffsets(topic)) {
        if (BigInt(high) > 0n) ends.set(`${topic}|${partition}`, BigInt(high))
      }
    }
  } finally {
    await admin.disconnect()
  }
  const messages: ReadMessage[] = []
  if (ends.size === 0) return messages
  const consumer = kafka.consumer({ groupId: uniqueName('reader'), maxWaitTimeInMs: 200 })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics, fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ topic, partition, message }) => {
            const end = ends.get(`${topic}|${partition}`)
            if (end === undefined || BigInt(message.offset) >= end) return
            messages.push(readMessage(topic, partition, message))
            if (BigInt(message.offset) + 1n >= end) ends.delete(`${topic}|${partition}`)
            if (ends.size === 0) resolve()
          },
        })
        .catch(reject)
    })
  } finally {
    await consumer.disconnect()
  }
  return messages
}

function readMessage(topic: string, partition: number, message: KafkaMessage): ReadMessage {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value
    if (first !== undefined) headers[name] = first.toString()
  }
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key?.toString(),
    value: message.value?.toString(),
    headers,
  }
}
