// The run's own topics with their retry and dead-letter siblings: created by the kafkajs admin, then deleted.
import { deadLetterTopicOf, defaultRetryDelaysMs, retryTopicOf } from '@meridian/events'
import { kafkaClient } from '@meridian/infra'

export interface EventsTopics {
  /** every topic created, siblings included */
  all: string[]
  /** deletes the topics, and the consumer groups given (their committed offsets) */
  delete(groups: string[]): Promise<void>
}

const siblingsOf = (topic: string) => [
  topic,
  ...defaultRetryDelaysMs.map((_, i) => retryTopicOf(topic, i + 1)),
  deadLetterTopicOf(topic),
]

export async function createEventsTopics(
  brokers: string,
  topics: string[],
  partitions: number,
): Promise<EventsTopics> {
  const all = topics.flatMap(siblingsOf)
  const admin = kafkaClient(brokers, 'bench-events-admin').admin()
  await admin.connect()
  try {
    await admin.createTopics({
      waitForLeaders: false,
      topics: all.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
    })
    // ready means every partition has a leader that answers for its offsets (as the events tests wait)
    const deadline = Date.now() + 30_000
    for (;;) {
      try {
        const { topics: described } = await admin.fetchTopicMetadata({ topics: all })
        const led = described.every(
          (topic) => topic.partitions.length === partitions && topic.partitions.every((p) => p.leader >= 0),
        )
        if (led) {
          for (const topic of all) await admin.fetchTopicOffsets(topic)
          break
        }
      } catch (error) {
        if (Date.now() > deadline) throw error
      }
      if (Date.now() > deadline) throw new Error(`the bench topics have no leaders after 30 s`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } catch (error) {
    await admin.deleteTopics({ topics: all }).catch(() => {})
    throw error
  } finally {
    await admin.disconnect()
  }

  return {
    all,
    async delete(groups) {
      const cleaner = kafkaClient(brokers, 'bench-events-admin').admin()
      await cleaner.connect()
      try {
        if (groups.length > 0) await cleaner.deleteGroups(groups).catch(() => {})
        await cleaner.deleteTopics({ topics: all })
      } finally {
        await cleaner.disconnect()
      }
    },
  }
}
