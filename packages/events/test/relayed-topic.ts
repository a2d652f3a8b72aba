// What the tests of events through the outbox and Kafka start from: a database with the event tables, a topic with its
// retry and dead-letter topics, a producer, and an outbox relay that marks what it publishes (the rows stay readable);
// and consumers of that topic, each in a group of its own, stopped with the rest.
import { uniqueName } from '@meridian/testkit'
import { consume, type EventConsumer, type EventHandler } from '../src/consumer.ts'
import type { DomainEvent } from '../src/envelope.ts'
import type { EventProducer } from '../src/kafka.ts'
import { createOutboxRelay, type OutboxRelay } from '../src/outbox-relay.ts'
import {
  type EffectsDatabase,
  type EventTopics,
  effectsDatabase,
  eventKafka,
  eventTopics,
  recordingLogger,
} from './consumer-fixtures.ts'
import { testProducer } from './relay-fixtures.ts'

export interface RelayedTopic {
  database: EffectsDatabase
  topics: EventTopics
  producer: EventProducer
  relay: OutboxRelay
  /** a consumer of the topic in a group of its own (`label` and a suffix); its group's name */
  startConsumer(
    label: string,
    handler: EventHandler<'order.completed'>,
    options?: { retryDelaysMs?: number[]; afterCommit?: (event: DomainEvent) => void },
  ): Promise<string>
  /** the consumers started so far, stopped */
  stopConsumers(): Promise<void>
  /** everything stopped, the topics deleted and the database dropped */
  close(): Promise<void>
}

export async function relayedTopic(label: string): Promise<RelayedTopic> {
  const database = await effectsDatabase()
  const topics = await eventTopics(label)
  const producer = await testProducer()
  const relay = createOutboxRelay({
    sql: database.sql,
    producer,
    logger: recordingLogger().logger,
    mode: 'mark',
    leadershipRetryMs: 100,
  })
  await relay.start()
  const consumers: EventConsumer[] = []
  const stopConsumers = async () => {
    for (const consumer of consumers.splice(0)) await consumer.stop()
  }
  return {
    database,
    topics,
    producer,
    relay,
    async startConsumer(groupLabel, handler, options = {}) {
      const group = uniqueName(groupLabel)
      consumers.push(
        await consume({
          kafka: eventKafka(),
          sql: database.sql,
          type: 'order.completed',
          topic: topics.topic,
          validate: false,
          group,
          handler,
          logger: recordingLogger().logger,
          producer,
          retryDelaysMs: options.retryDelaysMs ?? [100],
          ...(options.afterCommit ? { afterCommit: options.afterCommit } : {}),
        }),
      )
      return group
    },
    stopConsumers,
    async close() {
      await stopConsumers()
      await relay.stop()
      await producer.disconnect()
      await topics.delete()
      await database.drop()
    },
  }
}
