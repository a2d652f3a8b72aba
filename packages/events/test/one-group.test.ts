// A service's consumer of several types: one Kafka group for all of them, its instances dividing every topic's
// partitions.
import { testKafka, uniqueName } from '@meridian/testkit'
import { AssignerProtocol } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import type { AnyTypeConsumption, TypeConsumption } from '../src/consume-options.ts'
import { consumeTypes, type EventConsumer } from '../src/consumer.ts'
import type { DomainEvent } from '../src/envelope.ts'
import {
  applyEffect,
  type EventTopics,
  eventKafka,
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
})
