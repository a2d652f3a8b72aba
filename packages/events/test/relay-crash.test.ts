// The relay killed between publish and delete: the next relay publishes the batch again; nothing lost, no effect twice.
import type { Sql } from '@meridian/db'
import type { TestTopics } from '@meridian/testkit'
import { scaledMs } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventProducer } from '../src/kafka.ts'
import { createOutboxRelay } from '../src/outbox-relay.ts'
import {
  EffectCounter,
  type OutboxDatabase,
  outboxDatabase,
  outboxTopics,
  RelayProcess,
  recordingLogger,
  testProducer,
  type Write,
  waitFor,
  writeWidget,
} from './relay-fixtures.ts'

let database: OutboxDatabase
let sql: Sql
let topics: TestTopics
let counter: EffectCounter
let producer: EventProducer
const processes: RelayProcess[] = []

beforeAll(async () => {
  database = await outboxDatabase('relay_crash')
  sql = database.sql
  topics = await outboxTopics(['relay-crash'])
  counter = await EffectCounter.start(Object.values(topics.names))
  producer = await testProducer()
})

afterAll(async () => {
  for (const relay of processes) await relay.kill()
  await producer?.disconnect()
  await counter?.stop()
  await topics?.delete()
  await database?.drop()
})

describe('OutboxRelay killed between publish and delete', () => {
  it('when the relay process is SIGKILLed after Kafka acknowledged a batch and before its rows were deleted, then the next relay publishes that batch again and every event takes effect exactly once', async () => {
    const topic = topics.names['relay-crash']!
    const writes: Write[] = []
    for (let n = 0; n < 250; n++)
      writes.push(await writeWidget(sql, topic, `agg-${n % 5}`, Math.floor(n / 5) + 1))

    // The relay process reports its first batch from onPublished and waits there: the test kills it at that point.
    const crashing = RelayProcess.start({
      name: 'relay-crashing',
      databaseUrl: database.url,
      batchSize: 100,
      pollIntervalMs: 100,
      leadershipRetryMs: 100,
      holdAfterPublish: true,
    })
    processes.push(crashing)
    await crashing.waitFor('its first batch', () => crashing.published().length > 0, scaledMs(60_000))
    const [batch] = crashing.published()
    await crashing.kill()

    expect(batch!.outboxIds).toHaveLength(100)
    const [left] = await sql<{ rows: number }[]>`select count(*)::int as rows from outbox`
    expect(left!.rows).toBe(250) // killed before the delete: the published batch is still in the outbox
    await waitFor('the killed relay’s batch in Kafka', () => batch!.eventIds.every((id) => counter.has(id)))

    const relay = createOutboxRelay({ sql, producer, logger: recordingLogger(), leadershipRetryMs: 100 })
    await relay.start()
    try {
      await waitFor(
        'every event, and the batch again',
        () => counter.distinct === 250 && counter.messages.length >= 350,
      )
      expect(counter.account(writes, topic)).toEqual({ lost: 0, duplicated: 0, unexpected: 0 })

      // at-least-once, exactly as designed: the only messages delivered twice are the batch in flight at the kill
      const deliveries = new Map<string, number>()
      for (const message of counter.messages) {
        deliveries.set(message.event.id, (deliveries.get(message.event.id) ?? 0) + 1)
      }
      const twice = [...deliveries].filter(([, count]) => count > 1)
      expect(twice.every(([, count]) => count === 2)).toBe(true)
      expect(twice.map(([id]) => id).sort()).toEqual([...batch!.eventIds].sort())
      expect(counter.messages).toHaveLength(350)

      for (const [key, sequences] of counter.sequencesByKey(topic)) {
        expect(sequences, key).toEqual(Array.from({ length: 50 }, (_, index) => index + 1))
      }
      await waitFor('an empty outbox', async () => {
        const [row] = await sql<{ rows: number }[]>`select count(*)::int as rows from outbox`
        return row!.rows === 0
      })
    } finally {
      await relay.stop()
    }
  })
})
