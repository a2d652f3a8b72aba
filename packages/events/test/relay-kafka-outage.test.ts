// Kafka unreachable for 10 s while writes continue: rows wait in the outbox and the relay resumes alone, losing nothing.
import type { Sql } from '@meridian/db'
import type { TestTopics } from '@meridian/testkit'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEventMetrics } from '../src/event-metrics.ts'
import { createOutboxRelay } from '../src/outbox-relay.ts'
import {
  delay,
  EffectCounter,
  NetworkSwitch,
  type OutboxDatabase,
  outboxDatabase,
  outboxTopics,
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

beforeAll(async () => {
  database = await outboxDatabase('relay_outage')
  sql = database.sql
  topics = await outboxTopics(['relay-outage', 'relay-lost-answer'])
  counter = await EffectCounter.start(Object.values(topics.names))
})

afterAll(async () => {
  await counter?.stop()
  await topics?.delete()
  await database?.drop()
})

async function outboxRows(): Promise<number> {
  const [row] = await sql<{ rows: number }[]>`select count(*)::int as rows from outbox`
  return row!.rows
}

describe('OutboxRelay during a Kafka outage', () => {
  /*
   * "Kafka stopped for 10 s": the broker is shared with every other test file running meanwhile, so it is not
   * stopped. Instead the relay's own Kafka client connects through a socket factory the test controls: cut() resets
   * its open connections and refuses new ones — to the relay this is exactly a broker that went away — and restore()
   * lets connections through again. The relay is never told anything: it has to notice and recover by itself.
   */
  it('when the relay’s Kafka connection is cut for 10 s while writes continue, then rows wait in the outbox, the relay warns, resumes alone, and every event takes effect once in per-key order', async () => {
    const topic = topics.names['relay-outage']!
    const network = new NetworkSwitch()
    const producer = await testProducer(network)
    const logger = recordingLogger()
    const metrics = createEventMetrics(new Registry())
    const relay = createOutboxRelay({ sql, producer, logger, metrics, leadershipRetryMs: 100 })
    await relay.start()

    const writes: Write[] = []
    let writing = true
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        writes.push(await writeWidget(sql, topic, `agg-${n % 4}`, Math.floor(n / 4) + 1))
        await delay(20)
      }
    })()

    try {
      await waitFor('events to flow', () => counter.distinct >= 20)
      network.cut()
      const writtenAtCut = writes.length
      await delay(10_000)
      const writtenDuringOutage = writes.length - writtenAtCut
      const waiting = await outboxRows()
      const pendingGauge = (await metrics.outboxPending.get()).values[0]?.value ?? 0
      network.restore()
      await delay(500)
      writing = false
      await writer

      expect(writtenDuringOutage).toBeGreaterThan(100)
      // what was written during the outage could not be published; it waited in the outbox
      expect(waiting).toBeGreaterThan(writtenDuringOutage / 2)
      expect(pendingGauge).toBeGreaterThan(0)
      expect(
        logger.entries.some((entry) => entry.level === 'warn' && /could not publish/.test(entry.msg ?? '')),
      ).toBe(true)

      await waitFor('every event after the outage', () => counter.distinct >= writes.length)
      expect(counter.account(writes, topic)).toEqual({ lost: 0, duplicated: 0, unexpected: 0 })
      for (const [key, sequences] of counter.sequencesByKey(topic)) {
        const written = writes.filter((write) => write.aggregateId === key).map((write) => write.seq)
        expect(sequences, key).toEqual(written)
      }
      await waitFor('an empty outbox', async () => (await outboxRows()) === 0)
      expect(relay.isLeader()).toBe(true) // the same relay, never restarted
    } finally {
      writing = false
      await writer
      await relay.stop()
      await producer.disconnect()
    }
  })

  /*
   * The nastier moment of an outage: the broker wrote a batch but the relay never heard back. The idempotent producer
   * numbers each partition's messages; only the identical request is recognised as a duplicate, and a request that
   * begins with the same number but carries more messages is refused as out of sequence — for good. So the relay must
   * send the failed batch again unchanged, even though more rows were written in the meantime.
   */
  it('when Kafka wrote a batch but its answer was lost in a cut, then the relay sends the same batch again, the broker recognises it, and the rows written meanwhile follow', async () => {
    const topic = topics.names['relay-lost-answer']!
    const network = new NetworkSwitch()
    const producer = await testProducer(network)
    const logger = recordingLogger()
    const relay = createOutboxRelay({ sql, producer, logger, leadershipRetryMs: 100, maxBackoffMs: 500 })
    await relay.start()
    try {
      await waitFor('the relay to lead', () => relay.isLeader())
      const down = network.cutAfterNextProduceRequest()
      const writes = [await writeWidget(sql, topic, 'k-1', 1), await writeWidget(sql, topic, 'k-2', 1)]
      await down
      writes.push(await writeWidget(sql, topic, 'k-1', 2), await writeWidget(sql, topic, 'k-2', 2))
      await waitFor('the relay to give up on the batch', () =>
        logger.entries.some((entry) => entry.level === 'warn' && /could not publish/.test(entry.msg ?? '')),
      )
      writes.push(await writeWidget(sql, topic, 'k-1', 3))
      network.restore()

      await waitFor('every event', () => counter.account(writes, topic).lost === 0)
      expect(counter.account(writes, topic)).toEqual({ lost: 0, duplicated: 0, unexpected: 0 })
      for (const [key, sequences] of counter.sequencesByKey(topic)) {
        expect(sequences, key).toEqual(key === 'k-1' ? [1, 2, 3] : [1, 2])
      }
      await waitFor('an empty outbox', async () => (await outboxRows()) === 0)
    } finally {
      await relay.stop()
      await producer.disconnect()
    }
  })
})
