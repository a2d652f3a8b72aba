// A service's consumers declared as a map of event type to handler, and its event backbone registered by its own
// buildApp: the app a test builds can carry the same relay and consumers as the one main.ts runs.
import type { EventType } from '@meridian/contracts'
import type { Sql } from '@meridian/db'
import { type KafkaSecurityVariables, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import type { FastifyInstance } from 'fastify'
import type { Kafka } from 'kafkajs'
import type { Registry } from 'prom-client'
import type { EventHandler } from './consumer.ts'
import { createEventMetrics } from './event-metrics.ts'
import { type AnyServiceConsumer, type EventsPluginOptions, eventsPlugin } from './events-plugin.ts'
import { createKafka } from './kafka.ts'

/** One handler per consumed type, each receiving that type's events: the whole of a service's consumers. */
export type ConsumerHandlers<Types extends EventType> = { [Type in Types]: EventHandler<Type> }

/** Where a service's consumers read: its own group and the event types' topics, unless a test isolates them. */
export interface ConsumersOptions<Types extends EventType = EventType> {
  /** the consumer group; default the service's */
  group?: string
  /** topics read instead of the event types, for isolation (tests); a service reads its event types */
  topics?: Partial<Record<Types, string>>
  /** the retries' delays (tests shorten them); default the consumer's */
  retryDelaysMs?: readonly number[]
  /**
   * only these types' consumers run (tests: one consumer on the broker, the others left alone); default all. The
   * consumers declared stay the whole list; consumersOf ignores it, registerServiceEvents applies it.
   */
  types?: readonly Types[]
}

/**
 * A consumer of each type in `handlers`, in its order, in the group `group` (the inbox key and the retries'
 * `consumer-group` header) unless `options` gives another.
 *
 *     consumersOf('payment', { 'order.placed': (event, tx) => payments.chargeOrder(event.data, tx) }, options)
 */
export function consumersOf<Types extends EventType>(
  group: string,
  handlers: ConsumerHandlers<Types>,
  { group: ownGroup, topics = {}, retryDelaysMs }: ConsumersOptions<Types> = {},
): AnyServiceConsumer<Types>[] {
  return (Object.keys(handlers) as Types[]).map((type) => {
    const topic = topics[type]
    return {
      type,
      group: ownGroup ?? group,
      handler: handlers[type],
      ...(topic === undefined ? {} : { topic }),
      ...(retryDelaysMs ? { retryDelaysMs } : {}),
    } as AnyServiceConsumer<Types>
  })
}

/**
 * The backbone buildApp is asked for: none when absent or false (most component tests); `true` as main.ts runs it
 * (the outbox relay and the consumers, on KAFKA_BROKERS under KAFKA_NAMESPACE); or a test's variant of it.
 */
export type ServiceEvents<Types extends EventType = EventType> =
  | boolean
  | {
      /** the consumers' group, topics and retries (default the service's), or none at all */
      consumers?: ConsumersOptions<Types> | false
      /** relay the outbox (default true) */
      relay?: EventsPluginOptions['relay']
      /** the broker's client; default one on KAFKA_BROKERS */
      kafka?: Kafka
    }

/** What a service's buildApp takes besides the kit's dependencies: the backbone it is asked for. */
export interface WithServiceEvents<Types extends EventType = EventType> {
  /** the event backbone (relay and consumers): main.ts's `true`, a test's own group and topics, or none (default) */
  events?: ServiceEvents<Types>
}

export interface RegisterServiceEventsOptions<Types extends EventType> extends WithServiceEvents<Types> {
  /** the service's name: its Kafka client id */
  service: string
  /** the brokers, the namespace, and the client's TLS and SASL (KAFKA_TLS*, KAFKA_SASL_*: ServiceEnv has them all) */
  config: { KAFKA_BROKERS: string; KAFKA_NAMESPACE: string } & KafkaSecurityVariables
  sql: Sql
  /** the service's consumers (consumersOf), with the group and topics asked for */
  consumers?: (options: ConsumersOptions<Types>) => AnyServiceConsumer[]
}

/**
 * For a service's buildApp: the event metrics on its /metrics, and the backbone when `events` asks for it (see
 * eventsPlugin for what opens and closes when). Returns the consumers as declared, which a test may inspect whether or
 * not they run.
 */
export async function registerServiceEvents<Types extends EventType>(
  app: FastifyInstance & { metrics: { registry: Registry } },
  { service, config, sql, events, consumers: consumersFor }: RegisterServiceEventsOptions<Types>,
): Promise<AnyServiceConsumer[]> {
  // outbox lag, published, consumed, retries and dead letters, even when this app runs no backbone
  const metrics = createEventMetrics(app.metrics.registry)
  const asked = typeof events === 'object' ? events : {}
  const consumers = consumersFor?.(asked.consumers || {}) ?? []
  if (!events) return consumers
  const running = runningOf(consumers, asked.consumers)
  await app.register(eventsPlugin, {
    sql,
    kafka:
      asked.kafka ??
      createKafka({ brokers: config.KAFKA_BROKERS, clientId: service, ...kafkaSecurityFromEnv(config) }),
    namespace: config.KAFKA_NAMESPACE,
    metrics,
    ...(asked.relay === undefined ? {} : { relay: asked.relay }),
    consumers: running,
  })
  return consumers
}

/** The declared consumers the backbone runs: none when asked for none, else those of the types asked for (or all). */
function runningOf<Types extends EventType>(
  consumers: AnyServiceConsumer[],
  asked: ConsumersOptions<Types> | false | undefined,
): AnyServiceConsumer[] {
  if (asked === false) return []
  const types: readonly EventType[] | undefined = asked?.types
  return types === undefined ? consumers : consumers.filter((each) => types.includes(each.type))
}
