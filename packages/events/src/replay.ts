// Replay: dead-lettered events go back to their original topic, once the cause of their failure has been fixed.
import type { Admin, Kafka } from 'kafkajs'
import type { ConsumerLogger } from './consumer-logger.ts'
import { createEventProducer, type EventProducer, headerText, type OutgoingMessage } from './kafka.ts'
import { type OffsetRange, readRanges } from './offset-ranges.ts'
import { baseTopicOf, carriedHeaders, RetryHeader } from './retry.ts'

/**
 * The Kafka consumer group whose committed offsets mark how far a dead-letter topic has been replayed
 * (`{topic}.dlt.replay`): an event below its offset has been re-published, the others are pending.
 */
export const replayGroupOf = (deadLetterTopic: string): string => `${deadLetterTopic}.replay`

/** A replay of the same dead-letter topic is under way (its replay group has members). */
export class ReplayInProgressError extends Error {
  constructor(readonly topic: string) {
    super(`a replay of ${topic} is already under way`)
    this.name = 'ReplayInProgressError'
  }
}

export interface ReplayOptions {
  kafka: Kafka
  /** the dead-letter topic, `{topic}.dlt` */
  topic: string
  logger: Pick<ConsumerLogger, 'info' | 'warn'>
  /**
   * `pending` (default): the events not replayed yet; `beginning`: every event the topic holds, replayed before or
   * not (consumers skip what their group already processed)
   */
  from?: 'pending' | 'beginning'
  /** publishes the replayed events; default: one of its own, closed at the end */
  producer?: EventProducer
  /** give up when no message arrives for this long while some are still expected; default 30000 ms */
  idleTimeoutMs?: number
}

export interface ReplayResult {
  replayed: number
  /** how many events the dead-letter topic holds (replayed before or not); 0: nothing was ever dead-lettered there */
  held: number
  /** how many went to each topic (the `original-topic` header of each) */
  to: Record<string, number>
}

/** The offset each partition's replay has reached (its replay group's committed offset; -1: never replayed). */
export async function replayedOffsets(admin: Admin, topic: string): Promise<Map<number, bigint>> {
  const [committed] = await admin.fetchOffsets({ groupId: replayGroupOf(topic), topics: [topic] })
  return new Map((committed?.partitions ?? []).map(({ partition, offset }) => [partition, BigInt(offset)]))
}

/**
 * Re-publishes the events of a dead-letter topic, from where the last replay stopped (or from its beginning) up to
 * the end it had when this replay started, to the topic in each one's `original-topic` header, with its key, value and
 * `message-id` (the failure headers are dropped). Reads as the topic's replay group (replayGroupOf), committing each
 * batch once it is published: a replay that stops half-way is resumed by the next, and an event replayed twice (a
 * crash between publish and commit) is a redelivery the consumers' inbox recognises. The dead-letter topic itself is
 * left as it is. Refuses (ReplayInProgressError) while another replay of the topic runs.
 */
export async function replayDeadLetters(options: ReplayOptions): Promise<ReplayResult> {
  const { kafka, topic, logger } = options
  if (!topic.endsWith('.dlt')) throw new Error(`'${topic}' is not a dead-letter topic (<topic>.dlt)`)
  const groupId = replayGroupOf(topic)

  const admin = kafka.admin()
  await admin.connect()
  try {
    const {
      groups: [group],
    } = await admin.describeGroups([groupId])
    if (group && group.members.length > 0) throw new ReplayInProgressError(topic)

    const replayed =
      options.from === 'beginning' ? new Map<number, bigint>() : await replayedOffsets(admin, topic)
    /** per partition with something to replay: where to start and the end to stop at */
    const ranges = new Map<number, OffsetRange>()
    let held = 0n
    for (const { partition, high, low } of await admin.fetchTopicOffsets(topic)) {
      held += BigInt(high) - BigInt(low)
      const start = [BigInt(low), replayed.get(partition) ?? -1n].reduce((a, b) => (b > a ? b : a))
      if (BigInt(high) > start) ranges.set(partition, { start, end: BigInt(high) })
    }
    if (ranges.size === 0) {
      logger.info(
        { topic, replayed: 0, held: Number(held) },
        held === 0n
          ? 'nothing to replay: the dead-letter topic holds no events'
          : 'nothing to replay: every dead-lettered event was replayed before',
      )
      return { replayed: 0, held: Number(held), to: {} }
    }

    const producer = options.producer ?? (await createEventProducer(kafka))
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 500, allowAutoTopicCreation: false })
    const byTopic = new Map<string, number>()
    try {
      await consumer.connect()
      await readRanges({
        consumer,
        topic,
        ranges,
        idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
        what: `replay of ${topic}`,
        handle: async (partition, batch) => {
          const messages: OutgoingMessage[] = batch.map((message) => ({
            topic: headerText(message.headers, RetryHeader.originalTopic) ?? baseTopicOf(topic),
            key: message.key?.toString() ?? '',
            value: message.value?.toString('utf8') ?? '',
            headers: carriedHeaders(message.headers),
          }))
          await producer.publish(messages)
          // how far this partition is replayed: the next replay starts here
          const next = BigInt(batch[batch.length - 1]!.offset) + 1n
          await consumer.commitOffsets([{ topic, partition, offset: next.toString() }])
          for (const message of messages) byTopic.set(message.topic, (byTopic.get(message.topic) ?? 0) + 1)
        },
      })
    } finally {
      await consumer.disconnect()
      if (!options.producer) await producer.disconnect()
    }

    const to = Object.fromEntries(byTopic)
    const count = [...byTopic.values()].reduce((sum, n) => sum + n, 0)
    logger.info({ topic, replayed: count, to }, 'dead-lettered events replayed')
    return { replayed: count, held: Number(held), to }
  } finally {
    await admin.disconnect()
  }
}
