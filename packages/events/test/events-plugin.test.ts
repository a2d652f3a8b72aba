// eventsPlugin: a service's producer, outbox relay and consumers opened by one registration and closed with the app.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import { scaledMs, uniqueName } from '@meridian/testkit'
import Fastify from 'fastify'
import { AssignerProtocol } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consumer, eventsPlugin } from '../src/events-plugin.ts'
import { appendToOutbox } from '../src/outbox.ts'
import {
  applyEffect,
  type EffectsDatabase,
  type EventTopics,
  effectsDatabase,
  eventKafka,
  eventTopics,
  waitFor,
} from './consumer-fixtures.ts'
import { testEvent } from './relay-fixtures.ts'

let database: EffectsDatabase
let topics: EventTopics

beforeAll(async () => {
  database = await effectsDatabase()
  topics = await eventTopics('plugin')
})

afterAll(async () => {
  await topics?.delete()
  await database?.drop()
})

/** A business write's event, committed to the outbox (its type is the test's topic; its data order.completed's). */
async function commitEvent(orderId: string): Promise<string> {
  const event = testEvent(topics.topic, { orderId })
  await transaction(database.sql, (tx) => appendToOutbox(tx, event, { aggregateId: orderId }))
  return event.id
}

describe('eventsPlugin', () => {
  it('when registered, then an outbox row reaches the service’s consumer; when the app closes, then relay and consumers stop and nothing more is published', async () => {
    const app = Fastify()
    await app.register(eventsPlugin, {
      sql: database.sql,
      kafka: eventKafka('plugin'),
      relay: { leadershipRetryMs: 100 },
      consumers: [
        consumer({
          // order.completed data (commitEvent), on the test's own topic
          type: 'order.completed',
          topic: topics.topic,
          group: uniqueName('plugin-group'),
          // the envelopes' type is the topic's name, not a catalogue type
          validate: false,
          handler: (event, tx) => applyEffect(tx, event),
        }),
      ],
    })
    await app.ready()

    const first = await commitEvent(randomUUID())
    await waitFor(
      'the consumer applied the event',
      async () => (await database.effectCounts()).get(first) === 1,
    )

    await app.close()

    const second = await commitEvent(randomUUID())
    // a pause (scaled): nothing can be waited for that does not come
    await new Promise((resolve) => setTimeout(resolve, scaledMs(1500)))
    const [left] = await database.sql<{ n: number }[]>`select count(*)::int as n from outbox`
    expect(left?.n).toBe(1)
    expect((await database.effectCounts()).get(second)).toBeUndefined()
  })

  it('when the relay is turned off, then the plugin publishes nothing from the outbox (another process relays)', async () => {
    await database.sql`delete from outbox`
    const app = Fastify()
    await app.register(eventsPlugin, { sql: database.sql, kafka: eventKafka('plugin-norelay'), relay: false })
    await app.ready()
    try {
      await commitEvent(randomUUID())
      // a pause (scaled): nothing can be waited for that does not come
      await new Promise((resolve) => setTimeout(resolve, scaledMs(1000)))
      const [left] = await database.sql<{ n: number }[]>`select count(*)::int as n from outbox`
      expect(left?.n).toBe(1)
    } finally {
      await app.close()
    }
  })

  it('when a namespace is given, then the relay publishes to <namespace><type> and the consumers read that topic in group <namespace><group>', async () => {
    await database.sql`delete from outbox`
    // the test's topic is `ns-<unique>`: namespace 'ns-', event type '<unique>'
    const namespaced = await eventTopics('ns')
    const namespace = 'ns-'
    const type = namespaced.topic.slice(namespace.length)
    const group = uniqueName('plugin-group')
    const app = Fastify()
    await app.register(eventsPlugin, {
      sql: database.sql,
      kafka: eventKafka('plugin-namespace'),
      namespace,
      relay: { leadershipRetryMs: 100 },
      consumers: [
        consumer({
          type: 'order.completed',
          topic: type,
          group,
          validate: false,
          handler: (event, tx) => applyEffect(tx, event),
        }),
      ],
    })
    await app.ready()
    try {
      const orderId = randomUUID()
      const event = testEvent(type, { orderId })
      await transaction(database.sql, (tx) => appendToOutbox(tx, event, { aggregateId: orderId }))
      await waitFor(
        'the namespaced consumer applied the event',
        async () => (await database.effectCounts()).get(event.id) === 1,
      )
      const admin = eventKafka('plugin-namespace-admin').admin()
      await admin.connect()
      try {
        const groups = (await admin.listGroups()).groups.map((each) => each.groupId)
        expect(groups).toContain(`${namespace}${group}`)
        expect(groups.some((each) => each.startsWith(group))).toBe(false)
      } finally {
        await admin.disconnect()
      }
    } finally {
      await app.close()
      await namespaced.delete()
    }
  })

  it('when a service consumes two topics in one group, then one Kafka consumer in that group reads both and each consumer gets the events of its own topic', async () => {
    await database.sql`delete from outbox`
    const [first, second] = await Promise.all([eventTopics('two-a'), eventTopics('two-b')])
    if (!first || !second) throw new Error('no topics')
    const group = uniqueName('plugin-group')
    const app = Fastify()
    const each = (topic: string) =>
      consumer({
        type: 'order.completed',
        topic,
        group,
        validate: false,
        handler: (event, tx) => applyEffect(tx, event),
      })
    await app.register(eventsPlugin, {
      sql: database.sql,
      kafka: eventKafka('plugin-two-topics'),
      relay: { leadershipRetryMs: 100 },
      consumers: [each(first.topic), each(second.topic)],
    })
    await app.ready()
    try {
      const events = [
        testEvent(first.topic, { orderId: randomUUID() }),
        testEvent(second.topic, { orderId: randomUUID() }),
      ]
      await transaction(database.sql, async (tx) => {
        for (const event of events) await appendToOutbox(tx, event, { aggregateId: randomUUID() })
      })
      await waitFor('both consumers applied their event', async () => {
        const counts = await database.effectCounts()
        return events.every((event) => counts.get(event.id) === 1)
      })
      // one member, in the service's group, subscribed to both topics and their retry topics
      const admin = eventKafka('plugin-two-topics-admin').admin()
      await admin.connect()
      try {
        const {
          groups: [described],
        } = await admin.describeGroups([group])
        expect(described?.members).toHaveLength(1)
        const member = described!.members[0]!
        const subscribed = AssignerProtocol.MemberMetadata.decode(member.memberMetadata)?.topics ?? []
        const retries = (topic: string) => [1, 2, 3].map((n) => `${topic}.retry.${n}`)
        expect([...subscribed].sort()).toEqual(
          [first.topic, ...retries(first.topic), second.topic, ...retries(second.topic)].sort(),
        )
        const groups = (await admin.listGroups()).groups.map((each) => each.groupId)
        expect(groups.filter((each) => each.startsWith(group))).toEqual([group])
      } finally {
        await admin.disconnect()
      }
    } finally {
      await app.close()
      await Promise.all([first.delete(), second.delete()])
    }
  })
})
