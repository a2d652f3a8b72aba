// A test file's set-up that it removes after its tests: a consumer's topics, database and producer. Apart from
// consumer-fixtures.ts, which a child process (consumer-crash-child.ts) imports outside the test runner.
import type { Kafka } from 'kafkajs'
import { afterAll } from 'vitest'
import { createEventProducer, type EventProducer } from '../src/kafka.ts'
import { type EffectsDatabase, type EventTopics, effectsDatabase, eventTopics } from './consumer-fixtures.ts'

/** Registers an undo to run after the file (the last registered first); one that fails is passed over (gone already). */
export type AfterFile = (undo: () => Promise<unknown>) => void

/** The file's list of undos, run after its tests: call once at the top of a test file. */
export function undoAfterFile(): AfterFile {
  const undos: (() => Promise<unknown>)[] = []
  afterAll(async () => {
    for (const undo of undos.splice(0).reverse()) await undo().catch(() => {})
  })
  return (undo) => {
    undos.push(undo)
  }
}

/** What a consumer's test reads and writes: `count` topics (each with its retry and dead-letter topics), a database and a producer. */
export interface ConsumerFixture {
  /** the first (or only) set of topics */
  topics: EventTopics
  /** every set, `count` of them */
  topicSets: EventTopics[]
  db: EffectsDatabase
  producer: EventProducer
}

/** Made at once, and removed after the file by `afterFile`. */
export async function consumerFixture(
  kafka: Kafka,
  afterFile: AfterFile,
  options: { count?: number; label?: string } = {},
): Promise<ConsumerFixture> {
  const [topicSets, db, producer] = await Promise.all([
    Promise.all(Array.from({ length: Math.max(1, options.count ?? 1) }, () => eventTopics(options.label))),
    effectsDatabase(),
    createEventProducer(kafka),
  ])
  afterFile(() => Promise.all(topicSets.map((each) => each.delete())))
  afterFile(() => db.drop())
  afterFile(() => producer.disconnect())
  const [topics] = topicSets
  if (!topics) throw new Error('no topics were made')
  return { topics, topicSets, db, producer }
}
