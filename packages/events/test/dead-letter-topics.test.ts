// The operators' view of dead-letter topics on real Kafka: counts, the newest events with their failure headers, which
// of them a replay has re-published, and a replay that takes only what is pending (and refuses to run twice at once).
import { uniqueName } from '@meridian/testkit'
import { beforeAll, describe, expect, it } from 'vitest'
import { listDeadLetterTopics, readDeadLetters } from '../src/dead-letter-topics.ts'
import { createEventProducer, type EventProducer } from '../src/kafka.ts'
import { ReplayInProgressError, replayDeadLetters, replayGroupOf } from '../src/replay.ts'
import {
  type EventTopics,
  eventKafka,
  eventTopics,
  orderCompleted,
  readTopics,
  recordingLogger,
  waitFor,
} from './consumer-fixtures.ts'
import { undoAfterFile } from './file-fixtures.ts'

const kafka = eventKafka('dlt-view-test')
const afterFile = undoAfterFile()
let producer: EventProducer
beforeAll(async () => {
  producer = await createEventProducer(kafka)
  afterFile(() => producer.disconnect())
})

async function freshTopics(): Promise<EventTopics> {
  const topics = await eventTopics('dltv')
  afterFile(() => topics.delete())
  return topics
}

/** Parks messages in the dead-letter topic as a consumer does: value and key unchanged, the failure headers added. */
async function park(topics: EventTopics, values: { key: string; value: string; id: string }[], at: Date) {
  await producer.publish(
    values.map(({ key, value, id }, index) => ({
      topic: topics.dlt,
      key,
      value,
      headers: {
        'message-id': id,
        'original-topic': topics.topic,
        'consumer-group': 'payment',
        'error-message': `the stock service is down (${index})`,
        'dead-lettered-at': new Date(at.getTime() + index).toISOString(),
        'retry-count': '3',
      },
    })),
  )
}

const parked = (count: number) =>
  Array.from({ length: count }, () => {
    const event = orderCompleted()
    return { key: String(event.data.orderId), value: JSON.stringify(event), id: event.id }
  })

describe.concurrent('dead-letter topics', () => {
  it('when events are parked and replayed, then the counts, the newest events and their replayed marks follow; a second replay takes only the newcomers', async () => {
    const topics = await freshTopics()
    const first = parked(3)
    await park(topics, first, new Date('2026-11-24T09:00:00Z'))

    const summary = () => listDeadLetterTopics({ kafka, namespace: topics.topic })
    expect(await summary()).toEqual([
      { topic: topics.dlt, originalTopic: topics.topic, total: 3, pending: 3 },
    ])

    const events = await readDeadLetters({ kafka, topic: topics.dlt })
    expect(events.map((e) => e.eventId)).toEqual(first.map((e) => e.id).reverse())
    expect(events[2]).toEqual({
      partition: expect.any(Number),
      offset: expect.any(String),
      key: first[0]?.key,
      eventId: first[0]?.id,
      eventType: 'order.completed',
      originalTopic: topics.topic,
      consumerGroup: 'payment',
      errorMessage: 'the stock service is down (0)',
      deadLetteredAt: '2026-11-24T09:00:00.000Z',
      retryCount: 3,
      replayed: false,
      value: first[0]?.value,
    })

    const logger = recordingLogger().logger
    expect(await replayDeadLetters({ kafka, topic: topics.dlt, logger })).toEqual({
      replayed: 3,
      held: 3,
      to: { [topics.topic]: 3 },
    })
    expect(await summary()).toEqual([
      { topic: topics.dlt, originalTopic: topics.topic, total: 3, pending: 0 },
    ])
    expect((await readDeadLetters({ kafka, topic: topics.dlt })).map((e) => e.replayed)).toEqual([
      true,
      true,
      true,
    ])

    const [later] = parked(1)
    await park(topics, [later!], new Date('2026-11-24T10:00:00Z'))
    expect((await summary())[0]).toMatchObject({ total: 4, pending: 1 })
    const marks = await readDeadLetters({ kafka, topic: topics.dlt })
    expect(marks.map((e) => [e.eventId, e.replayed])).toEqual([
      [later?.id, false],
      ...first.map((e) => [e.id, true]).reverse(),
    ])

    expect(await replayDeadLetters({ kafka, topic: topics.dlt, logger })).toEqual({
      replayed: 1,
      held: 4,
      to: { [topics.topic]: 1 },
    })
    const republished = await readTopics(kafka, [topics.topic])
    expect(republished.map((m) => m.headers['message-id']).sort()).toEqual(
      [...first, later!].map((e) => e.id).sort(),
    )
    // the dead-letter topic itself is left as it was
    expect((await summary())[0]).toMatchObject({ total: 4, pending: 0 })
  })

  it('when asked for the newest few, then only those come, newest first; a value that is not an event has no type and a long one is cut', async () => {
    const topics = await freshTopics()
    const events = parked(4)
    await park(topics, events, new Date('2026-11-24T09:00:00Z'))
    await park(
      topics,
      [{ key: 'k', value: `not json ${'x'.repeat(100)}`, id: 'raw-1' }],
      new Date('2026-11-24T11:00:00Z'),
    )

    const newest = await readDeadLetters({ kafka, topic: topics.dlt, limit: 2, valueLimit: 20 })
    expect(newest.map((e) => e.eventId)).toEqual(['raw-1', events[3]?.id])
    expect(newest[0]).toMatchObject({ eventType: null, value: `not json ${'x'.repeat(10)}…` })
    expect(newest[0]?.value).toHaveLength(20)
  })

  it('when a replay of the topic is under way, then another is refused and nothing is published', async () => {
    const topics = await freshTopics()
    await park(topics, parked(1), new Date())
    const holder = kafka.consumer({ groupId: replayGroupOf(topics.dlt) })
    afterFile(() => holder.disconnect())
    await holder.connect()
    await holder.subscribe({ topics: [topics.dlt], fromBeginning: true })
    let joined = false
    holder.on(holder.events.GROUP_JOIN, () => {
      joined = true
    })
    // a member that never commits and publishes nothing: it only holds the group
    await holder.run({ autoCommit: false, eachMessage: async () => {} })
    await waitFor('the holder to join', () => joined)

    await expect(
      replayDeadLetters({ kafka, topic: topics.dlt, logger: recordingLogger().logger }),
    ).rejects.toBeInstanceOf(ReplayInProgressError)
    expect(await readTopics(kafka, [topics.topic])).toHaveLength(0)
  })

  it('when the topic is not a dead-letter topic, then reading it is refused; the namespace and the list of topics keep others out', async () => {
    await expect(readDeadLetters({ kafka, topic: 'order.placed' })).rejects.toThrow(/not a dead-letter topic/)
    expect(await listDeadLetterTopics({ kafka, namespace: uniqueName('nobody') })).toEqual([])
    const topics = await freshTopics()
    // named without a namespace: the list is exactly the dead-letter topics of the topics named, where they exist
    expect(await listDeadLetterTopics({ kafka, of: [topics.topic, uniqueName('absent')] })).toEqual([
      { topic: topics.dlt, originalTopic: topics.topic, total: 0, pending: 0 },
    ])
  })
})
