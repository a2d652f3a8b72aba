// A service's event backbone as one Fastify plugin: the producer, the outbox relay and the service's consumer (one
// Kafka consumer, in one group, for all the types it reads) are opened when it is registered and closed with the app,
// consumers first (their handlers may still write outbox rows), then the relay (it publishes what is left), then the
// producer. Whoever handed over `sql` closes it afterwards:
// Fastify runs an instance's onClose hooks last-added first, so a hook added before this plugin runs after it.
import type { EventType } from '@meridian/contracts'
import type { Sql } from '@meridian/db'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Kafka } from 'kafkajs'
import type { AnyTypeConsumption, BatchWorkRunner, GroupConsumeOptions } from './consume-options.ts'
import {
  type ConsumeOptions,
  consumeTypes,
  defaultConsumerConcurrency,
  type EventConsumer,
} from './consumer.ts'
import type { EventMetrics } from './event-metrics.ts'
import { createEventProducer } from './kafka.ts'
import { createOutboxRelay, type OutboxRelayOptions } from './outbox-relay.ts'

/**
 * A consumer of the service, of events of `Type`: what only it knows (type, group, handler, its tuning); the plugin
 * adds the rest.
 */
export type ServiceConsumer<Type extends EventType> = Omit<
  ConsumeOptions<Type>,
  'kafka' | 'sql' | 'logger' | 'metrics' | 'producer'
>

/**
 * A consumer of any one catalogue type: the union of ServiceConsumer<T> over the catalogue (`Types` narrows it), so
 * that a list holds consumers of different types and each keeps its handler's type.
 */
export type AnyServiceConsumer<Types extends EventType = EventType> = {
  [Type in Types]: ServiceConsumer<Type>
}[Types]

/**
 * A service consumer typed by its `type`: the handler receives that type's events, and a handler of another type does
 * not compile. Also for a consumer declared on its own, where a bare object literal would widen `type` to string.
 *
 *     consumers: [consumer({ type: 'order.placed', group: 'payment', handler: chargeOrder })]
 */
export function consumer<Type extends EventType>(options: ServiceConsumer<Type>): ServiceConsumer<Type> {
  return options
}

export interface EventsPluginOptions {
  /** the service's database: the outbox the relay reads, the inbox the consumers write */
  sql: Sql
  /** a client from createKafka() */
  kafka: Kafka
  metrics?: EventMetrics
  /** relay this database's outbox (default true); or the relay's own tuning */
  relay?: boolean | Omit<OutboxRelayOptions, 'sql' | 'producer' | 'logger' | 'metrics'>
  /** the service's consumers, of any catalogue types: consumer({...}) elements or object literals */
  consumers?: readonly AnyServiceConsumer[]
  /**
   * `KAFKA_NAMESPACE`: prepended to every topic the relay publishes to and every topic and group the consumers use,
   * so that one system's run (end-to-end tests, a fault run, a benchmark) shares a broker with others without
   * reading their events or their offsets; default '' (topic = event type, group as given)
   */
  namespace?: string
}

async function eventsPluginImpl(app: FastifyInstance, options: EventsPluginOptions): Promise<void> {
  const { sql, kafka, metrics } = options
  const namespace = options.namespace ?? ''
  const producer = await createEventProducer(kafka)
  const relay =
    options.relay === false
      ? undefined
      : createOutboxRelay({
          ...(typeof options.relay === 'object' ? options.relay : {}),
          sql,
          producer,
          topicPrefix: namespace,
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
  // the kit's work context (its app's `withWork` decorator), when the app has one: each batch runs as its work
  const withWork = app.hasDecorator('withWork')
    ? (app as unknown as { withWork: BatchWorkRunner }).withWork
    : undefined
  // One Kafka consumer per group (a service declares one group for all its types: consumersOf), namespaced as its
  // topics are. Started together: after a crash a group waits for the dead member's session to lapse, once for all.
  const starting = groupsOf(options.consumers ?? [], namespace).map(({ group, types, tuning }) =>
    consumeTypes({
      ...tuning,
      group,
      types,
      kafka,
      sql,
      producer,
      logger: app.log,
      ...(metrics ? { metrics } : {}),
      ...(withWork ? { withWork } : {}),
    }),
  )
  const started = await Promise.allSettled(starting)
  for (const outcome of started) if (outcome.status === 'fulfilled') consumers.push(outcome.value)
  const failed = started.find((outcome) => outcome.status === 'rejected')
  if (failed) throw failed.reason
}

/** The group-wide tuning a service's consumers may each give: their consumer's, once they share it. */
type GroupTuning = Pick<
  GroupConsumeOptions,
  'concurrency' | 'sessionTimeoutMs' | 'maxWaitTimeMs' | 'inboxRetentionMs' | 'inboxCleanupIntervalMs'
>

/**
 * The service's consumers by (namespaced) group, in the order declared, with their topics namespaced. The tuning of
 * the group's one Kafka consumer is what each would have had alone, together: the sum of their concurrencies (3 each
 * by default: the database connections they took before), the longest session and retention, the shortest fetch wait
 * and cleanup interval.
 */
function groupsOf(
  consumers: readonly AnyServiceConsumer[],
  namespace: string,
): { group: string; types: AnyTypeConsumption[]; tuning: GroupTuning }[] {
  const groups = new Map<string, { group: string; types: AnyTypeConsumption[]; each: AnyServiceConsumer[] }>()
  for (const each of consumers) {
    const group = `${namespace}${each.group}`
    const entry = groups.get(group) ?? { group, types: [], each: [] }
    groups.set(group, entry)
    // the consumer's own fields, group-wide ones included, are a TypeConsumption of its own type with extras
    entry.types.push({ ...each, topic: `${namespace}${each.topic ?? each.type}` } as AnyTypeConsumption)
    entry.each.push(each)
  }
  const defined = (values: (number | undefined)[]) => values.filter((value) => value !== undefined)
  const pick = (values: (number | undefined)[], choose: (...values: number[]) => number) =>
    defined(values).length > 0 ? choose(...defined(values)) : undefined
  return [...groups.values()].map(({ group, types, each }) => {
    const tuning: GroupTuning = {
      concurrency: each.reduce((sum, one) => sum + (one.concurrency ?? defaultConsumerConcurrency), 0),
    }
    const sessionTimeoutMs = pick(
      each.map((one) => one.sessionTimeoutMs),
      Math.max,
    )
    const maxWaitTimeMs = pick(
      each.map((one) => one.maxWaitTimeMs),
      Math.min,
    )
    const inboxRetentionMs = pick(
      each.map((one) => one.inboxRetentionMs),
      Math.max,
    )
    const inboxCleanupIntervalMs = pick(
      each.map((one) => one.inboxCleanupIntervalMs),
      Math.min,
    )
    if (sessionTimeoutMs !== undefined) tuning.sessionTimeoutMs = sessionTimeoutMs
    if (maxWaitTimeMs !== undefined) tuning.maxWaitTimeMs = maxWaitTimeMs
    if (inboxRetentionMs !== undefined) tuning.inboxRetentionMs = inboxRetentionMs
    if (inboxCleanupIntervalMs !== undefined) tuning.inboxCleanupIntervalMs = inboxCleanupIntervalMs
    return { group, types, tuning }
  })
}

export const eventsPlugin = fp(eventsPluginImpl, { name: '@meridian/events', fastify: '5.x' })
