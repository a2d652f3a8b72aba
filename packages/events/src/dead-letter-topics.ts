// What operators see of the dead-letter topics: each `{topic}.dlt` with how many events it holds and how many are not
// replayed yet, and its newest events with the failure headers they were parked with.
import { randomUUID } from 'node:crypto'
import type { Kafka, KafkaMessage } from 'kafkajs'
import { headerText } from './kafka.ts'
import { type OffsetRange, readRanges } from './offset-ranges.ts'
import { replayedOffsets } from './replay.ts'
import { baseTopicOf, RetryHeader } from './retry.ts'

export interface DeadLetterTopicSummary {
  /** the dead-letter topic, `{topic}.dlt` */
  topic: string
  /** `{topic}` */
  originalTopic: string
  /** events the topic holds */
  total: number
  /** of those, events not replayed yet */
  pending: number
}

export interface DeadLetteredEvent {
  partition: number
  offset: string
  key: string
  /** the `message-id` header (the event id) */
  eventId: string | null
  /** the envelope's type, when the value is one */
  eventType: string | null
  originalTopic: string
  consumerGroup: string | null
  errorMessage: string | null
  deadLetteredAt: string | null
  retryCount: number | null
  /** whether a replay has re-published it */
  replayed: boolean
  /** the message value as it was parked (cut at valueLimit characters) */
  value: string
}

export interface DeadLetterTopicsOptions {
  kafka: Kafka
  /** only topics with this prefix (a system run's KAFKA_NAMESPACE); default none */
  namespace?: string
  /**
   * only the dead-letter topics of these topics (named without the namespace): a system's own, so that another run's
   * or a test's topics on the same broker stay out; default every `.dlt` topic with the prefix
   */
  of?: readonly string[]
}

const isDeadLetterTopic = (topic: string) => topic.endsWith('.dlt')

/** Every dead-letter topic (in the namespace), sorted by name, with its counts. */
export async function listDeadLetterTopics(
  options: DeadLetterTopicsOptions,
): Promise<DeadLetterTopicSummary[]> {
  const namespace = options.namespace ?? ''
  const admin = options.kafka.admin()
  await admin.connect()
  try {
    const wanted = options.of && new Set(options.of.map((topic) => `${namespace}${topic}.dlt`))
    const topics = (await admin.listTopics())
      .filter((topic) =>
        wanted ? wanted.has(topic) : topic.startsWith(namespace) && isDeadLetterTopic(topic),
      )
      .sort()
    return await Promise.all(
      topics.map(async (topic) => {
        const [offsets, replayed] = await Promise.all([
          admin.fetchTopicOffsets(topic),
          replayedOffsets(admin, topic),
        ])
        let total = 0n
        let pending = 0n
        for (const { partition, low, high } of offsets) {
          const [from, to] = [BigInt(low), BigInt(high)]
          const mark = replayed.get(partition) ?? -1n
          total += to - from
          pending += to - (mark > from ? (mark < to ? mark : to) : from)
        }
        return { topic, originalTopic: baseTopicOf(topic), total: Number(total), pending: Number(pending) }
      }),
    )
  } finally {
    await admin.disconnect()
  }
}

export interface ReadDeadLettersOptions {
  kafka: Kafka
  /** the dead-letter topic */
  topic: string
  /** how many of the newest events; default 50 */
  limit?: number
  /** a value longer than this is cut (with …); default 4000 characters */
  valueLimit?: number
  /** give up when the broker sends nothing for this long; default 10000 ms */
  timeoutMs?: number
}

/**
 * The newest `limit` events of a dead-letter topic (newest first, by the time they were parked), each marked
 * replayed or not. Reads the tail of each partition through a throwaway consumer group, removed afterwards; the topic
 * is not changed. Unknown topic: the broker's error (UNKNOWN_TOPIC_OR_PARTITION) is thrown.
 */
export async function readDeadLetters(options: ReadDeadLettersOptions): Promise<DeadLetteredEvent[]> {
  const { kafka, topic } = options
  if (!isDeadLetterTopic(topic)) throw new Error(`'${topic}' is not a dead-letter topic (<topic>.dlt)`)
  const limit = options.limit ?? 50
  const valueLimit = options.valueLimit ?? 4000
  const admin = kafka.admin()
  await admin.connect()
  const groupId = `dlt-reader-${randomUUID()}`
  let joined = false
  try {
    const [offsets, replayed] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      replayedOffsets(admin, topic),
    ])
    /** per partition with events: where its newest `limit` start, and its end */
    const ranges = new Map<number, OffsetRange>()
    for (const { partition, low, high } of offsets) {
      const [from, end] = [BigInt(low), BigInt(high)]
      const start = end - BigInt(limit) > from ? end - BigInt(limit) : from
      if (end > start) ranges.set(partition, { start, end })
    }
    if (ranges.size === 0) return []

    const events: DeadLetteredEvent[] = []
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200, allowAutoTopicCreation: false })
    try {
      await consumer.connect()
      joined = true
      await readRanges({
        consumer,
        topic,
        ranges,
        idleTimeoutMs: options.timeoutMs ?? 10_000,
        what: `reading ${topic}`,
        handle: async (partition, messages) => {
          const mark = replayed.get(partition) ?? -1n
          for (const message of messages)
            events.push(describe(message, partition, BigInt(message.offset) < mark, topic, valueLimit))
        },
      })
    } finally {
      await consumer.disconnect()
    }
    const parkedAt = (event: DeadLetteredEvent) => event.deadLetteredAt ?? ''
    return events
      .sort((a, b) => parkedAt(b).localeCompare(parkedAt(a)) || Number(BigInt(b.offset) - BigInt(a.offset)))
      .slice(0, limit)
  } finally {
    if (joined) await admin.deleteGroups([groupId]).catch(() => {})
    await admin.disconnect()
  }
}

function describe(
  message: KafkaMessage,
  partition: number,
  replayed: boolean,
  topic: string,
  valueLimit: number,
): DeadLetteredEvent {
  const value = message.value?.toString('utf8') ?? ''
  const retryCount = Number(headerText(message.headers, RetryHeader.retryCount))
  return {
    partition,
    offset: message.offset,
    key: message.key?.toString() ?? '',
    eventId: headerText(message.headers, RetryHeader.messageId) ?? null,
    eventType: typeOf(value),
    originalTopic: headerText(message.headers, RetryHeader.originalTopic) ?? baseTopicOf(topic),
    consumerGroup: headerText(message.headers, RetryHeader.consumerGroup) ?? null,
    errorMessage: headerText(message.headers, RetryHeader.errorMessage) ?? null,
    deadLetteredAt: headerText(message.headers, RetryHeader.deadLetteredAt) ?? null,
    retryCount: Number.isInteger(retryCount) ? retryCount : null,
    replayed,
    value: value.length > valueLimit ? `${value.slice(0, valueLimit - 1)}…` : value,
  }
}

/** The `type` of a JSON envelope, or null for anything else. */
function typeOf(value: string): string | null {
  try {
    const parsed: unknown = JSON.parse(value)
    if (parsed !== null && typeof parsed === 'object' && 'type' in parsed && typeof parsed.type === 'string')
      return parsed.type
  } catch {
    // not JSON: a message that was never an event
  }
  return null
}
