// consumersOf, a service's consumers as a map of event type to handler, and registerServiceEvents, the backbone a
// service's buildApp registers itself: none unless asked for, and when asked for, its own consumers on the broker.
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import { AssignerProtocol } from 'kafkajs'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEvent } from '../src/envelope.ts'
import { createEventProducer, type EventProducer } from '../src/kafka.ts'
import { type ConsumersOptions, consumersOf, registerServiceEvents } from '../src/service-events.ts'
import {
  applyEffect,
  type EffectsDatabase,
  type EventTopics,
  effectsDatabase,
  eventKafka,
  eventTopics,
  kafkaBrokers,
  orderCompleted,
  publishEvents,
  waitFor,
} from './consumer-fixtures.ts'

const handlers = {
  'order.completed': async () => {},
  'order.cancelled': async () => {},
}

/** As a service's events/consumers.ts writes it. */
const widgetsConsumers = (options?: ConsumersOptions<keyof typeof handlers>) =>
  consumersOf('widgets', handlers, options)

describe('consumersOf', () => {
  it('when a service declares its handlers, then one consumer per type in the map’s order, in its group, on each type’s own topic', () => {
    const consumers = consumersOf('widgets', handlers)
    expect(consumers.map(({ type, group, topic }) => ({ type, group, topic }))).toEqual([
      { type: 'order.completed', group: 'widgets', topic: undefined },
      { type: 'order.cancelled', group: 'widgets', topic: undefined },
    ])
    expect(consumers[0]?.handler).toBe(handlers['order.completed'])
    expect(consumers.every((each) => !('retryDelaysMs' in each))).toBe(true)
  })

  it('when a test gives a group, some topics and retry delays, then every consumer takes them and a type without a topic keeps its own', () => {
    const consumers = consumersOf('widgets', handlers, {
      group: 'widgets-test',
      topics: { 'order.cancelled': 'cancelled-of-this-test' },
      retryDelaysMs: [10, 20],
    })
    expect(
      consumers.map(({ type, group, topic, retryDelaysMs }) => ({ type, group, topic, retryDelaysMs })),
    ).toEqual([
      { type: 'order.completed', group: 'widgets-test', topic: undefined, retryDelaysMs: [10, 20] },
      {
        type: 'order.cancelled',
        group: 'widgets-test',
        topic: 'cancelled-of-this-test',
        retryDelaysMs: [10, 20],
      },
    ])
  })
})

describe('registerServiceEvents', () => {
  let database: EffectsDatabase
  let topics: EventTopics
  let cancelledTopics: EventTopics
  let producer: EventProducer

  beforeAll(async () => {
    database = await effectsDatabase()
    ;[topics, cancelledTopics] = await Promise.all([
      eventTopics('service-events'),
      eventTopics('service-events-cancelled'),
    ])
    producer = await createEventProducer(eventKafka('service-events'))
  })

  afterAll(async () => {
    await producer?.disconnect()
    await Promise.all([topics, cancelledTopics].map((each) => each?.delete()))
    await database?.drop()
  })

  /** An app with the kit's metrics registry, as createServiceApp's. */
  const metricsApp = () => Object.assign(Fastify(), { metrics: { registry: new Registry() } })
  const config = () => ({ KAFKA_BROKERS: kafkaBrokers(), KAFKA_NAMESPACE: '' })

  for (const events of [undefined, false] as const) {
    it(`when events is ${events}, then the event metrics are on /metrics' registry and no backbone opens, and the declared consumers are returned`, async () => {
      const app = metricsApp()
      const consumers = await registerServiceEvents(app, {
        service: 'widgets',
        config: config(),
        sql: database.sql,
        events,
        consumers: widgetsConsumers,
      })
      await app.ready()
      expect(app.hasPlugin('@meridian/events')).toBe(false)
      expect(await app.metrics.registry.getSingleMetric('events_published_total')).toBeDefined()
      expect(consumers.map(({ type, group }) => ({ type, group }))).toEqual([
        { type: 'order.completed', group: 'widgets' },
        { type: 'order.cancelled', group: 'widgets' },
      ])
      await app.close()
    })
  }

  it('when a test asks for the backbone with a group and topic of its own, then its consumer applies an event published there, and closing the app stops it', async () => {
    const app = metricsApp()
    const group = `widgets-${randomUUID()}`
    const consumers = await registerServiceEvents(app, {
      service: 'widgets',
      config: config(),
      sql: database.sql,
      events: { consumers: { group, topics: { 'order.completed': topics.topic } }, relay: false },
      consumers: (options) =>
        consumersOf('widgets', { 'order.completed': (event, tx) => applyEffect(tx, event) }, options),
    })
    await app.ready()
    expect(app.hasPlugin('@meridian/events')).toBe(true)
    expect(consumers.map(({ type, group: its, topic }) => ({ type, group: its, topic }))).toEqual([
      { type: 'order.completed', group, topic: topics.topic },
    ])
    const event = orderCompleted()
    await publishEvents(producer, topics.topic, [event])
    await waitFor('the effect is applied', async () => (await database.effectCounts()).get(event.id) === 1)
    const [recorded] = await database.sql<{ consumerGroup: string }[]>`
      select consumer_group as "consumerGroup" from inbox where event_id = ${event.id}`
    expect(recorded?.consumerGroup).toBe(group)
    await app.close()
  })

  it('when a test asks for some types only, then only their consumers join the broker and consume, and the declared consumers are still all of them', async () => {
    const app = metricsApp()
    const group = `widgets-${randomUUID()}`
    // the types as a service's buildApp fixes them (WithServiceEvents<...>), not narrowed to those asked for
    const consumers = await registerServiceEvents<keyof typeof handlers>(app, {
      service: 'widgets',
      config: config(),
      sql: database.sql,
      events: {
        consumers: {
          group,
          topics: { 'order.completed': topics.topic, 'order.cancelled': cancelledTopics.topic },
          types: ['order.completed'],
        },
        relay: false,
      },
      consumers: (options) =>
        consumersOf(
          'widgets',
          {
            'order.completed': (event, tx) => applyEffect(tx, event),
            'order.cancelled': (event, tx) => applyEffect(tx, event),
          },
          options,
        ),
    })
    await app.ready()
    try {
      expect(consumers.map(({ type, topic }) => ({ type, topic }))).toEqual([
        { type: 'order.completed', topic: topics.topic },
        { type: 'order.cancelled', topic: cancelledTopics.topic },
      ])
      // the consumer resolves once it joined its group, so by ready() the group has its member, subscribed to the
      // running type's topics only
      const admin = eventKafka('service-events-admin').admin()
      await admin.connect()
      try {
        const {
          groups: [described],
        } = await admin.describeGroups([group])
        expect(described?.members).toHaveLength(1)
        const subscribed = AssignerProtocol.MemberMetadata.decode(
          described!.members[0]!.memberMetadata,
        )?.topics
        expect([...(subscribed ?? [])].sort()).toEqual(
          [topics.topic, topics.retry(1), topics.retry(2), topics.retry(3)].sort(),
        )
      } finally {
        await admin.disconnect()
      }

      // the left-out type's event first, then the running type's: only the latter is applied
      const cancelled = createEvent(
        'order.cancelled',
        { orderId: randomUUID(), reason: 'left out' },
        { source: 'events-test' },
      )
      await publishEvents(producer, cancelledTopics.topic, [cancelled])
      const completed = orderCompleted()
      await publishEvents(producer, topics.topic, [completed])
      await waitFor(
        'the effect is applied',
        async () => (await database.effectCounts()).get(completed.id) === 1,
      )
      expect((await database.effectCounts()).get(cancelled.id)).toBeUndefined()
    } finally {
      await app.close()
    }
  })
})
