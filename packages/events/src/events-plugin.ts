// A service's event backbone as one Fastify plugin: the producer, the outbox relay and the service's consumers are
// opened when it is registered and closed with the app, consumers first (their handlers may still write outbox rows),
// then the relay (it publishes what is left), then the producer. Whoever handed over `sql` closes it afterwards:
// Fastify runs an instance's onClose hooks last-added first, so a hook added before this plugin runs after it.
import type { Sql } from '@meridian/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Kafka } from 'kafkajs'
import { type ConsumeOptions, consume, type EventConsumer } from './consumer.ts'
import type { EventMetrics } from './event-metrics.ts'
import { createEventProducer } from './kafka.ts'
import { createOutboxRelay, type OutboxRelayOptions } from './outbox-relay.ts'

/** A consumer of the service: what only it knows (topic, group, handler, its tuning); the plugin adds the rest. */
export type ServiceConsumer = Omit<ConsumeOptions, 'kafka' | 'sql' | 'logger' | 'metrics' | 'producer'>

export interface EventsPluginOptions {
  /** the service's database: the outbox the relay reads, the inbox the consumers write */
  sql: Sql
  /** a client from createKafka() */
  kafka: Kafka
  metrics?: EventMetrics
  /** relay this database's outbox (default true); or the relay's own tuning */
  relay?: boolean | Omit<OutboxRelayOptions, 'sql' | 'producer' | 'logger' | 'metrics'>
  consumers?: readonly ServiceConsumer[]
}

async function eventsPluginImpl(app: FastifyInstance, options: EventsPluginOptions): Promise<void> {
  const { sql, kafka, metrics } = options
  const producer = await createEventProducer(kafka)
  const relay =
    options.relay === false
      ? undefined
      : createOutboxRelay({
          ...(typeof options.relay === 'object' ? options.relay : {}),
          sql,
          producer,
          logger: app.log,
          ...(metrics ? { metrics } : {}),
        })
  const consumers: EventConsumer[] = []

  app.addHook('onClose', async () => {
    for (const consumer of consumers) await consumer.stop()
    await relay?.stop()
    await producer.disconnect()
  })

  await relay?.start()
  for (const consumer of options.consumers ?? []) {
    consumers.push(
      await consume({ ...consumer, kafka, sql, producer, logger: app.log, ...(metrics ? { metrics } : {}) }),
    )
  }
}

export const eventsPlugin = fp(eventsPluginImpl, { name: '@meridian/events', fastify: '5.x' })
