// Kafka for tests: clients on the real broker and topics of each test file's own, deleted when the file is done.
import { kafkaClient } from '@meridian/infra'
import type { Kafka } from 'kafkajs'
import { infraEndpoints } from './endpoints.ts'
import { scaledMs } from './test-time.ts'
import { uniqueName } from './unique-name.ts'

export function testKafka(clientId = uniqueName('test-client')): Kafka {
  return kafkaClient(infraEndpoints().kafkaBrokers, clientId)
}

export interface TestTopics {
  /** the unique name created for each requested base name */
  names: Record<string, string>
  delete(): Promise<void>
}

/** Creates topics and waits until every partition has a leader (retrying metadata while the broker catches up). */
async function createTopicsAndWait(names: string[], partitions: number): Promise<void> {
  const admin = testKafka().admin()
  await admin.connect()
  try {
    await admin.createTopics({
      waitForLeaders: false,
      topics: names.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
    })
    const waitMs = scaledMs(30_000)
    const deadline = Date.now() + waitMs
    for (;;) {
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: names })
        const ready = topics.every(
          (topic) => topic.partitions.length === partitions && topic.partitions.every((p) => p.leader >= 0),
        )
        if (ready) return
      } catch (error) {
        // "does not host this topic-partition" / unknown topic: metadata not propagated yet
        if (Date.now() > deadline) throw error
      }
      if (Date.now() > deadline)
        throw new Error(`topics ${names.join(', ')} have no leaders after ${waitMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } finally {
    await admin.disconnect()
  }
}

async function deleteTopics(names: string[]): Promise<void> {
  const cleaner = testKafka().admin()
  await cleaner.connect()
  try {
    await cleaner.deleteTopics({ topics: names })
  } finally {
    await cleaner.disconnect()
  }
}

/** Topics of this test file only (automatic creation is off on the broker, so they are created here). */
export async function freshTopics(baseNames: string[], partitions = 3): Promise<TestTopics> {
  const names = Object.fromEntries(baseNames.map((base) => [base, uniqueName(base)]))
  await createTopicsAndWait(Object.values(names), partitions)
  return { names, delete: () => deleteTopics(Object.values(names)) }
}

/** Topics by exactly these names (a test's own namespace, say: `${uniqueName('ns')}.order.placed`). */
export async function namedTopics(names: string[], partitions = 3): Promise<TestTopics> {
  await createTopicsAndWait(names, partitions)
  return { names: Object.fromEntries(names.map((name) => [name, name])), delete: () => deleteTopics(names) }
}

export interface TestEventTopics {
  /** the main topic; the others are `${topic}.retry.1..n` and `${topic}.dlt`, as the consumer runner expects */
  topic: string
  retryTopics: string[]
  deadLetterTopic: string
  delete(): Promise<void>
}

/** A unique event topic with its retry and dead-letter topics, like infra/topics.json declares for real ones. */
export async function freshEventTopics(base: string, retries = 3, partitions = 3): Promise<TestEventTopics> {
  const topic = uniqueName(base)
  const retryTopics = Array.from({ length: retries }, (_, i) => `${topic}.retry.${i + 1}`)
  const deadLetterTopic = `${topic}.dlt`
  const all = [topic, ...retryTopics, deadLetterTopic]
  await createTopicsAndWait(all, partitions)
  return { topic, retryTopics, deadLetterTopic, delete: () => deleteTopics(all) }
}
