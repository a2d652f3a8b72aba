// A service's consumer of several types: one Kafka group for all of them, its instances dividing every topic's
// partitions, and the upgrade from the per-topic groups it had before.
import { randomUUID } from 'node:crypto'
import { testKafka, uniqueName } from '@meridian/testkit'
import { AssignerProtocol } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import type { AnyTypeConsumption, TypeConsumption } from '../src/consume-options.ts'
import { consumeTypes, type EventConsumer } from '../src/consumer.ts'
import type { DomainEvent } from '../src/envelope.ts'
import { perTopicGroupIdOf } from '../src/group-upgrade.ts'
import {
  applyEffect,
  type EventTopics,
  eventKafka,
  keyOf,
  orderCompleted,
  publishEvents,
  recordingLogger,
  waitFor,
} from './consumer-fixtures.ts'
import { type ConsumerFixture, consumerFixture, undoAfterFile } from './file-fixtures.ts'

const kafka = eventKafka('one-group-test')
const afterFile = undoAfterFile()

/** `count` topics (each with its retry and dead-letter topics), a database and a producer, removed after the file. */
async function setup(
  count: number,
): Promise<{ topics: EventTopics[]; db: ConsumerFixture['db']; producer: ConsumerFixture['producer'] }> {
  const { topicSets, db, producer } = await consumerFixture(kafka, afterFile, { count, label: 'one' })
  return { topics: topicSets, db, producer }
}

function stopAfterwards(consumer: EventConsumer): EventConsumer {
  afterFile(() => consumer.stop())
  return consumer
}

async function withAdmin<T>(run: (admin: ReturnType<typeof kafka.admin>) => Promise<T>): Promise<T> {
  const admin = testKafka().admin()
  await admin.connect()
  try {
    return await run(admin)
  } finally {
    await admin.disconnect()
  }
}

/**
 * One consumed type per topic, each with a handler of its own that records which events it got (the topics carry
 * order.completed events, not checked against the type: dispatch is by topic).
 */
function typesOf(topics: EventTopics[], handled: Map<string, string[]>): AnyTypeConsumption[] {
  return topics.map(
    ({ topic }): TypeConsumption<'order.completed'> => ({
      type: 'order.completed',
      topic,
      validate: false,
      retryDelaysMs: [50, 50, 50],
      handler: async (event, tx, context) => {
        if (context.topic !== topic && !context.topic.startsWith(`${topic}.retry.`))
          throw new Error(`the handler of ${topic} was given a message of ${context.topic}`)
        await applyEffect(tx, event)
        handled.set(topic, [...(handled.get(topic) ?? []), event.id])
      },
    }),
  )
}

describe('one consumer group per service', () => {
  it("when two instances of a service consume three types, then they form ONE group subscribed to all three topics and their retry topics, divide the partitions of all of them, and each type's events reach its handler once", async () => {
    const { topics, db, producer } = await setup(3)
    const group = uniqueName('one-group')
    const handled = new Map<string, string[]>()
    const start = () =>
      consumeTypes({
        kafka,
        sql: db.sql,
        group,
        logger: recordingLogger().logger,
        types: typesOf(topics, handled),
      })
    stopAfterwards(await start())
    stopAfterwards(await start())

    const everyTopic = topics.flatMap(({ topic, retry }) => [topic, retry(1), retry(2), retry(3)])
    const assigned = await waitFor('both instances to hold partitions of a stable group', () =>
      withAdmin(async (admin) => {
        const {
          groups: [described],
        } = await admin.describeGroups([group])
        if (described?.state !== 'Stable' || described.members.length !== 2) return undefined
        const members = described.members.map((member) => ({
          subscribed: [
            ...(AssignerProtocol.MemberMetadata.decode(member.memberMetadata)?.topics ?? []),
          ].sort(),
          assignment: AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment ?? {},
        }))
        return members.every(({ assignment }) => Object.keys(assignment).length > 0) ? members : undefined
      }),
    )
    for (const { subscribed } of assigned) expect(subscribed).toEqual([...everyTopic].sort())
    // every partition of every topic held by exactly one of the two
    const held = assigned.flatMap(({ assignment }) =>
      Object.entries(assignment).flatMap(([topic, partitions]) => partitions.map((p) => `${topic}|${p}`)),
    )
    expect([...held].sort()).toEqual(
      everyTopic.flatMap((topic) => [0, 1, 2].map((p) => `${topic}|${p}`)).sort(),
    )
    const groups = await withAdmin(async (admin) =>
      (await admin.listGroups()).groups.map((each) => each.groupId),
    )
    expect(groups.filter((each) => each.startsWith(group))).toEqual([group])

    const published = new Map<string, DomainEvent[]>()
    for (const { topic } of topics) {
      const events = Array.from({ length: 20 }, () => orderCompleted())
      published.set(topic, events)
      await publishEvents(producer, topic, events)
    }
    const all = [...published.values()].flat()
    await waitFor('every event applied', async () => (await db.effectCounts()).size === all.length)
    const counts = await db.effectCounts()
    expect(all.filter((event) => counts.get(event.id) !== 1)).toEqual([])
    for (const { topic } of topics)
      expect([...(handled.get(topic) ?? [])].sort()).toEqual(
        published
          .get(topic)!
          .map(({ id }) => id)
          .sort(),
      )
  })

  it("when the service's group has no committed offsets and its old per-topic groups have, then it starts where they had committed: the events before are not applied again, those after are applied once", async () => {
    const { topics, db, producer } = await setup(2)
    const group = uniqueName('upgraded')
    // what the old per-topic groups had consumed: every event so far, and on the first topic a retry of this group
    const before = new Map(
      topics.map(({ topic }) => [topic, Array.from({ length: 10 }, () => orderCompleted())]),
    )
    for (const [topic, events] of before) await publishEvents(producer, topic, events)
    const [first] = topics as [EventTopics, EventTopics]
    const oldRetry = orderCompleted()
    await producer.publish([
      {
        topic: first.retry(1),
        key: keyOf(oldRetry),
        value: JSON.stringify(oldRetry),
        headers: {
          'message-id': oldRetry.id,
          'retry-count': '1',
          'original-topic': first.topic,
          'consumer-group': group,
          'error-message': 'handled by the old group',
          'retry-due-at': String(Date.now()),
        },
      },
    ])
    await withAdmin(async (admin) => {
      for (const { topic, retry } of topics)
        for (const read of [topic, retry(1)]) {
          const ends = await admin.fetchTopicOffsets(read)
          await admin.setOffsets({
            groupId: perTopicGroupIdOf(group, topic),
            topic: read,
            partitions: ends.map(({ partition, high }) => ({ partition, offset: high })),
          })
        }
    })

    const handled = new Map<string, string[]>()
    const { logger, entries } = recordingLogger()
    stopAfterwards(await consumeTypes({ kafka, sql: db.sql, group, logger, types: typesOf(topics, handled) }))
    expect(entries.some((entry) => entry.msg?.includes('per-topic groups had committed'))).toBe(true)

    const after = new Map(topics.map(({ topic }) => [topic, [orderCompleted(randomUUID())]]))
    for (const [topic, events] of after) await publishEvents(producer, topic, events)
    const expected = [...after.values()].flat()
    await waitFor('the events after the old offsets applied', async () => {
      const counts = await db.effectCounts()
      return expected.every((event) => counts.has(event.id))
    })
    // the group has read every topic to its end: had it started anywhere before the old offsets, it would have
    // applied the earlier events (and the old retry) on its way
    await waitFor('the group to commit at the end of every topic', () =>
      withAdmin(async (admin) => {
        for (const read of [...topics.map(({ topic }) => topic), first.retry(1)]) {
          const ends = await admin.fetchTopicOffsets(read)
          const [committed] = await admin.fetchOffsets({ groupId: group, topics: [read] })
          for (const { partition, high } of ends) {
            const offset = committed?.partitions.find((each) => each.partition === partition)?.offset ?? '-1'
            // a partition never written to has nothing to commit
            if (high !== '0' && offset !== high) return false
          }
        }
        return true
      }),
    )
    const counts = await db.effectCounts()
    expect([...counts.keys()].sort()).toEqual(expected.map(({ id }) => id).sort())
    expect([...counts.values()].every((count) => count === 1)).toBe(true)
    // the old groups are left as they were, for an operator to delete
    const groups = await withAdmin(async (admin) =>
      (await admin.listGroups()).groups.map((each) => each.groupId),
    )
    for (const { topic } of topics) expect(groups).toContain(perTopicGroupIdOf(group, topic))
  })
})
