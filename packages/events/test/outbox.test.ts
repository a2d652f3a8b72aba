// appendToOutbox on real PostgreSQL and Kafka: the event commits or rolls back with the business write; dual publish;
// a dead letter appended through the outbox reaches its type's `.dlt` with the failure headers, where the operators'
// reader lists it and a replay sends it to the type's topic.
import { type Sql, transaction } from '@meridian/db'
import { freshEventTopics, type TestEventTopics, type TestTopics, testKafka } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readDeadLetters } from '../src/dead-letter-topics.ts'
import type { EventProducer } from '../src/kafka.ts'
import { appendToOutbox, OUTBOX_CHANNEL } from '../src/outbox.ts'
import { createOutboxRelay, type OutboxRelay } from '../src/outbox-relay.ts'
import { replayDeadLetters } from '../src/replay.ts'
import {
  EffectCounter,
  type OutboxDatabase,
  outboxDatabase,
  outboxTopics,
  recordingLogger,
  testEvent,
  testProducer,
  type Write,
  waitFor,
  writeWidget,
} from './relay-fixtures.ts'

let database: OutboxDatabase
let sql: Sql
let topics: TestTopics
let deadTopics: TestEventTopics
let counter: EffectCounter
let producer: EventProducer
let relay: OutboxRelay

beforeAll(async () => {
  database = await outboxDatabase('outbox')
  sql = database.sql
  topics = await outboxTopics([
    'outbox-rollback',
    'outbox-commit',
    'outbox-signal',
    'outbox-placed',
    'outbox-placed.v2',
  ])
  deadTopics = await freshEventTopics('outbox-dead', 0, 1)
  counter = await EffectCounter.start([...Object.values(topics.names), deadTopics.topic])
  producer = await testProducer()
  relay = createOutboxRelay({ sql, producer, logger: recordingLogger(), leadershipRetryMs: 100 })
  await relay.start()
})

afterAll(async () => {
  await relay?.stop()
  await producer?.disconnect()
  await counter?.stop()
  await topics?.delete()
  await deadTopics?.delete()
  await database?.drop()
})

function topic(base: string): string {
  const name = topics.names[base]
  if (!name) throw new Error(`no topic ${base}`)
  return name
}

async function rowCounts(): Promise<{ outbox: number; widgets: number }> {
  const [counts] = await sql<{ outbox: number; widgets: number }[]>`
    select (select count(*)::int from outbox) as outbox, (select count(*)::int from widgets) as widgets`
  return counts!
}

/**
 * Writes one more event of `key` on `topicName` and waits for it. Rows are published in id order and one key stays
 * in one partition, so when it arrives every earlier event of that key (and any duplicate of one) has arrived too.
 */
async function barrier(topicName: string, key: string): Promise<Write> {
  const write = await writeWidget(sql, topicName, key, 0)
  await waitFor('the barrier event', () => counter.has(write.entries[0]!.event.id))
  return write
}

const noLossNoDuplicate = { lost: 0, duplicated: 0, unexpected: 0 }

describe('appendToOutbox', () => {
  it('when a business write rolls back, then neither the business row nor an outbox row remains and no event is published', async () => {
    const widgets = topic('outbox-rollback')
    const doomed = testEvent(widgets, { write: 'rolled-back', seq: 1 })
    await expect(
      transaction(sql, async (tx) => {
        await tx`insert into widgets (id, name) values ('doomed', 'never committed')`
        await appendToOutbox(tx, doomed, { aggregateId: 'widget-1' })
        throw new Error('business rule broken')
      }),
    ).rejects.toThrow('business rule broken')

    expect(await rowCounts()).toEqual({ outbox: 0, widgets: 0 })
    const after = await barrier(widgets, 'widget-1')
    expect(counter.has(doomed.id)).toBe(false)
    expect(counter.account([after], widgets)).toEqual(noLossNoDuplicate)
    expect(counter.messages.filter((message) => message.topic === widgets)).toHaveLength(1)
  })

  it('when a business write commits, then exactly one event is published with the aggregate key, an outbox message id and the envelope', async () => {
    const widgets = topic('outbox-commit')
    const widgetsBefore = (await rowCounts()).widgets
    const committed = await writeWidget(sql, widgets, 'widget-2', 1)
    const [entry] = committed.entries
    expect(committed.entries).toHaveLength(1)
    const after = await barrier(widgets, 'widget-2')

    const delivered = counter.messages.filter((message) => message.event.id === entry!.event.id)
    expect(delivered).toHaveLength(1)
    expect(delivered[0]).toMatchObject({
      topic: widgets,
      key: 'widget-2',
      messageId: `outbox-${entry!.outboxId}`,
      event: entry!.event,
    })
    expect(counter.account([committed, after], widgets)).toEqual(noLossNoDuplicate)
    expect(counter.messages.filter((message) => message.topic === widgets)).toHaveLength(2)
    await waitFor('the relay to delete the published rows', async () => (await rowCounts()).outbox === 0)
    expect((await rowCounts()).widgets).toBe(widgetsBefore + 2)
  })

  it('when the transaction commits, then meridian_outbox is signalled; when it rolls back, then it is not', async () => {
    let signals = 0
    const listening = await sql.listen(OUTBOX_CHANNEL, () => {
      signals++
    })
    try {
      await transaction(sql, async (tx) => {
        await appendToOutbox(tx, testEvent(topic('outbox-signal'), { write: 'signal-rolled-back' }), {
          aggregateId: 'widget-3',
        })
        throw new Error('rolled back')
      }).catch(() => {})
      await writeWidget(sql, topic('outbox-signal'), 'widget-3', 1)
      // notifications arrive in commit order: had the rollback signalled, its signal would be here first
      await waitFor('the commit signal', () => signals >= 1)
      expect(signals).toBe(1)
    } finally {
      await listening.unlisten()
    }
  })

  it('when the aggregate id does not fit its column, then appendToOutbox throws and the business write rolls back with it', async () => {
    const before = await rowCounts()
    await expect(
      transaction(sql, async (tx) => {
        await tx`insert into widgets (id, name) values ('too-long', 'never committed')`
        await appendToOutbox(tx, testEvent(topic('outbox-signal'), {}), { aggregateId: 'x'.repeat(256) })
      }),
    ).rejects.toThrow(RangeError)
    expect((await rowCounts()).widgets).toBe(before.widgets)
  })

  it('when an event is dual-published as a .v2 type, then both rows are published, with their own ids and the same key', async () => {
    const v1 = topic('outbox-placed')
    const v2 = topic('outbox-placed.v2')
    const event = testEvent(v1, { write: 'dual-v1', seq: 1, total: 100 })
    const entries = await transaction(sql, (tx) =>
      appendToOutbox(tx, event, {
        aggregateId: 'order-7',
        alsoAs: [
          { type: v2, schemaVersion: '2.0.0', data: { write: 'dual-v2', seq: 1, total: { cents: 100 } } },
        ],
      }),
    )
    expect(entries.map((entry) => entry.event.type)).toEqual([v1, v2])
    const [, second] = entries
    expect(second!.event).toMatchObject({
      source: event.source,
      timestamp: event.timestamp,
      schemaVersion: '2.0.0',
    })
    expect(second!.event.id).not.toBe(event.id)

    const afterV1 = await barrier(v1, 'order-7')
    const afterV2 = await barrier(v2, 'order-7')
    const dual = (write: string): Write => ({ write, aggregateId: 'order-7', seq: 1, entries: [] })
    expect(counter.account([dual('dual-v1'), afterV1], v1)).toEqual(noLossNoDuplicate)
    expect(counter.account([dual('dual-v2'), afterV2], v2)).toEqual(noLossNoDuplicate)
    const v2Message = counter.messages.find((message) => message.event.id === second!.event.id)
    expect(v2Message).toMatchObject({
      topic: v2,
      key: 'order-7',
      messageId: `outbox-${second!.outboxId}`,
      event: second!.event,
    })
  })

  it('when an event is appended as a dead letter, then it is on its .dlt with the failure headers, listed by the dead-letter reader, and a replay sends it to its topic', async () => {
    const event = testEvent(deadTopics.topic, { write: 'given-up', seq: 1 })
    const deadLetter = { errorMessage: 'ECONNECTION: connect ECONNREFUSED', group: 'widgets', retries: 12 }
    const [entry] = await transaction(sql, (tx) =>
      appendToOutbox(tx, event, { aggregateId: 'widget-9', deadLetter }),
    )
    await waitFor('the relay to publish the dead letter', async () => {
      const [row] = await sql`select 1 from outbox where id = ${entry!.outboxId}`
      return row === undefined
    })
    const kafka = testKafka()
    const [parked, ...more] = await readDeadLetters({ kafka, topic: deadTopics.deadLetterTopic })
    expect(more).toEqual([])
    expect(parked).toMatchObject({
      key: 'widget-9',
      eventId: `outbox-${entry!.outboxId}`,
      eventType: deadTopics.topic,
      originalTopic: deadTopics.topic,
      consumerGroup: 'widgets',
      errorMessage: deadLetter.errorMessage,
      retryCount: 12,
      replayed: false,
    })
    expect(Date.parse(parked?.deadLetteredAt ?? '')).not.toBeNaN()
    expect(counter.has(event.id)).toBe(false)

    const replay = await replayDeadLetters({
      kafka,
      topic: deadTopics.deadLetterTopic,
      logger: recordingLogger(),
    })
    expect(replay).toMatchObject({ replayed: 1, to: { [deadTopics.topic]: 1 } })
    await waitFor('the replayed event on its topic', () => counter.has(event.id))
    expect(counter.messages.find((message) => message.event.id === event.id)).toMatchObject({
      topic: deadTopics.topic,
      key: 'widget-9',
      messageId: `outbox-${entry!.outboxId}`,
      event,
    })
  })
})
