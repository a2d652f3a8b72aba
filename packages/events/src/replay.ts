// Replay: dead-lettered events go back to their original topic, once the cause of their failure has been fixed.
import { randomUUID } from 'node:crypto'
import type { EachBatchPayload, Kafka } from 'kafkajs'
import type { ConsumerLogger } from './consumer-logger.ts'
import { createEventProducer, type EventProducer, headerText, type OutgoingMessage } from './kafka.ts'
import { baseTopicOf, carriedHeaders, RetryHeader } from './retry.ts'

export interface ReplayOptions {
  kafka: Kafka
  /** the dead-letter topic, `{topic}.dlt` */
  topic: string
  logger: Pick<ConsumerLogger, 'info' | 'warn'>
  /** publishes the replayed events; default: one of its own, closed at the end */
  producer?: EventProducer
  /** give up when no message arrives for this long while some are still expected; default 30000 ms */
  idleTimeoutMs?: number
}

/**
 * Re-publishes every message of a dead-letter topic, from its beginning up to the end it had when the replay started,
 * to the topic in its `original-topic` header, with its key, value and `message-id` (the failure headers are
 * dropped). Reads through a throwaway consumer group, removed afterwards; the dead-letter topic itself is left as it
 * is. Returns how many messages were re-published.
 *
 * Consumers see a replayed event as a redelivery: a group that had processed it within the inbox retention skips it.
 */
export async function replayDeadLetters(options: ReplayOptions): Promise<number> {
  const { kafka, topic, logger } = options
  if (!topic.endsWith('.dlt')) throw new Error(`'${topic}' is not a dead-letter topic (<topic>.dlt)`)

  const admin = kafka.admin()
  await admin.connect()
  const groupId = `replay-${topic}-${randomUUID()}`
  let joinedGroup = false
  try {
    const ends = new Map<number, bigint>()
    for (const { partition, high, low } of await admin.fetchTopicOffsets(topic)) {
      if (BigInt(high) > BigInt(low)) ends.set(partition, BigInt(high))
    }
    if (ends.size === 0) {
      logger.info({ topic, replayed: 0 }, 'dead-letter topic is empty; nothing to replay')
      return 0
    }

    const producer = options.producer ?? (await createEventProducer(kafka))
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 500, allowAutoTopicCreation: false })
    const byTopic = new Map<string, number>()
    try {
      await consumer.connect()
      joinedGroup = true
      await consumer.subscribe({ topics: [topic], fromBeginning: true })
      await new Promise<void>((resolve, reject) => {
        const idleTimeoutMs = options.idleTimeoutMs ?? 30_000
        let idle = setTimeout(onIdle, idleTimeoutMs)
        function onIdle() {
          reject(
            new Error(
              `replay of ${topic} stalled: no message for ${idleTimeoutMs} ms while partitions ` +
                `${[...ends.keys()].join(', ')} were not finished`,
            ),
          )
        }
        // Nothing is committed, so a restarted consumer would publish its partitions again from the start: stop instead.
        consumer.on(consumer.events.CRASH, ({ payload }) => {
          clearTimeout(idle)
          reject(payload.error)
        })
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }: EachBatchPayload) => {
              const end = ends.get(batch.partition)
              if (end === undefined) return
              const messages: OutgoingMessage[] = []
              for (const message of batch.messages) {
                if (BigInt(message.offset) >= end) break
                const target = headerText(message.headers, RetryHeader.originalTopic) ?? baseTopicOf(topic)
                messages.push({
                  topic: target,
                  key: message.key?.toString() ?? '',
                  value: message.value?.toString('utf8') ?? '',
                  headers: carriedHeaders(message.headers),
                })
              }
              await producer.publish(messages)
              for (const message of messages)
                byTopic.set(message.topic, (byTopic.get(message.topic) ?? 0) + 1)
              clearTimeout(idle)
              idle = setTimeout(onIdle, idleTimeoutMs)
              if (BigInt(batch.lastOffset()) + 1n >= end) ends.delete(batch.partition)
              if (ends.size === 0) {
                clearTimeout(idle)
                resolve()
              }
            },
          })
          .catch((error: unknown) => {
            clearTimeout(idle)
            reject(error)
          })
      })
    } finally {
      await consumer.disconnect()
      if (!options.producer) await producer.disconnect()
    }

    const replayed = [...byTopic.values()].reduce((sum, n) => sum + n, 0)
    logger.info({ topic, replayed, to: Object.fromEntries(byTopic) }, 'dead-lettered events replayed')
    return replayed
  } finally {
    if (joinedGroup) {
      await admin.deleteGroups([groupId]).catch((error: unknown) => {
        logger.warn({ err: error, groupId }, 'could not delete the replay consumer group')
      })
    }
    await admin.disconnect()
  }
}
