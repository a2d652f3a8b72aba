// Several relays on one database: one active relay (advisory lock), a standby that takes over, per-key order kept.
import type { Sql } from '@meridian/db'
import type { TestTopics } from '@meridian/testkit'
import { scaledMs } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventProducer } from '../src/kafka.ts'
import { createOutboxRelay, OUTBOX_RELAY_LOCK_NAME } from '../src/outbox-relay.ts'
import {
  delay,
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
  database = await outboxDatabase('relay_leader')
  sql = database.sql
  topics = await outboxTopics(['relay-killed-leader', 'relay-stopped-leader', 'relay-terminated-session'])
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

/** Backends holding the relay's advisory lock in this database. */
async function lockHolderPids(): Promise<number[]> {
  const rows = await sql<{ pid: number }[]>`
    select pid from pg_locks
    where locktype = 'advisory' and granted and objsubid = 1
      and database = (select oid from pg_database where datname = current_database())
      and objid = (hashtext(${OUTBOX_RELAY_LOCK_NAME})::bigint & 4294967295)::oid`
  return rows.map((row) => row.pid)
}

async function lockHolders(): Promise<number> {
  return (await lockHolderPids()).length
}

function expectInOrderPerKey(topic: string, writes: Write[]): void {
  const sequences = counter.sequencesByKey(topic)
  const keys = new Set(writes.map((write) => write.aggregateId))
  expect([...sequences.keys()].sort()).toEqual([...keys].sort())
  for (const key of keys) {
    const written = writes.filter((write) => write.aggregateId === key).map((write) => write.seq)
    expect(sequences.get(key), key).toEqual(written)
  }
}

describe('several OutboxRelays on one database', () => {
  it('when two relay processes run at once, then only the lock holder publishes, the standby takes over when the leader is killed midway, and every event takes effect once in per-key order', async () => {
    const topic = topics.names['relay-killed-leader']!
    const config = { databaseUrl: database.url, batchSize: 20, pollIntervalMs: 50, leadershipRetryMs: 100 }
    const a = RelayProcess.start({ name: 'relay-a', holdAfterPublish: false, ...config })
    const b = RelayProcess.start({ name: 'relay-b', holdAfterPublish: false, ...config })
    processes.push(a, b)
    await a.waitFor('start', () => a.has('started'), scaledMs(60_000))
    await b.waitFor('start', () => b.has('started'), scaledMs(60_000))
    await waitFor('a leader', () => a.has('leader') || b.has('leader'))
    const [leader, standby] = a.has('leader') ? [a, b] : [b, a]
    expect(await lockHolders()).toBe(1)

    const writes: Write[] = []
    let writing = true
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        writes.push(await writeWidget(sql, topic, `agg-${n % 6}`, Math.floor(n / 6) + 1))
        await delay(5)
      }
    })()
    try {
      await waitFor('events to flow', () => counter.distinct >= 150)
      // both relays are running: only the leader has published anything
      expect(standby.published()).toEqual([])
      expect(standby.has('leader')).toBe(false)
      expect(await lockHolders()).toBe(1)

      await leader.kill()
      await standby.waitFor('leadership', () => standby.has('leader'))
      await waitFor('the new leader to publish', () => standby.published().length > 0)
      await delay(300)
    } finally {
      writing = false
      await writer
    }

    await waitFor('every event', () => counter.account(writes, topic).lost === 0)
    expect(counter.account(writes, topic)).toEqual({ lost: 0, duplicated: 0, unexpected: 0 })
    expectInOrderPerKey(topic, writes)
    // never two publishers at once: the leader's last batch came before it was killed, the standby's first after
    const lastOfLeader = Math.max(...leader.published().map((report) => report.at))
    const firstOfStandby = Math.min(...standby.published().map((report) => report.at))
    expect(lastOfLeader).toBeLessThan(firstOfStandby)
    expect(writes.length).toBeGreaterThan(150)
    expect(await lockHolders()).toBe(1)
    await standby.stop()
  })

  it('when the active relay stops, then it gives up the lock and a standby in another instance takes over', async () => {
    const topic = topics.names['relay-stopped-leader']!
    const first = createOutboxRelay({ sql, producer, logger: recordingLogger(), leadershipRetryMs: 100 })
    const second = createOutboxRelay({ sql, producer, logger: recordingLogger(), leadershipRetryMs: 100 })
    await first.start()
    await second.start()
    try {
      expect([first.isLeader(), second.isLeader()]).toEqual([true, false])
      const writes = [await writeWidget(sql, topic, 'k-1', 1), await writeWidget(sql, topic, 'k-2', 1)]
      await waitFor('the first events', () => counter.account(writes, topic).lost === 0)

      await first.stop()
      await waitFor('the standby to lead', () => second.isLeader())
      writes.push(await writeWidget(sql, topic, 'k-1', 2), await writeWidget(sql, topic, 'k-2', 2))
      await waitFor('the later events', () => counter.account(writes, topic).lost === 0)
      expect(counter.account(writes, topic)).toEqual({ lost: 0, duplicated: 0, unexpected: 0 })
      expectInOrderPerKey(topic, writes)
      expect(await lockHolders()).toBe(1)
    } finally {
      await first.stop()
      await second.stop()
    }
  })

  it('when the active relay’s database session is terminated, again and again mid-stream, then the relay steps down without crashing, the lock is taken again, and every event takes effect once in per-key order', async () => {
    const topic = topics.names['relay-terminated-session']!
    const logger = recordingLogger()
    const relays = [1, 2].map(() =>
      createOutboxRelay({ sql, producer, logger, batchSize: 10, pollIntervalMs: 20, leadershipRetryMs: 100 }),
    )
    for (const relay of relays) await relay.start()
    const writes: Write[] = []
    let writing = true
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        writes.push(await writeWidget(sql, topic, `agg-${n % 4}`, Math.floor(n / 4) + 1))
        await delay(3)
      }
    })()
    try {
      try {
        for (let round = 0; round < 3; round++) {
          await waitFor('a relay to hold the lock', async () => (await lockHolders()) === 1)
          const published = counter.distinct
          await waitFor('events to flow', () => counter.distinct >= published + 30)
          await sql`select pg_terminate_backend(pid) from unnest(${sql.array(await lockHolderPids())}::int[]) as pid`
        }
        await waitFor('a relay to lead again', () => relays.some((relay) => relay.isLeader()))
        const published = counter.distinct
        await waitFor('events to flow again', () => counter.distinct >= published + 30)
      } finally {
        writing = false
        await writer
      }

      await waitFor('every event', () => counter.account(writes, topic).lost === 0)
      expect(counter.account(writes, topic)).toEqual({ lost: 0, duplicated: 0, unexpected: 0 })
      expectInOrderPerKey(topic, writes)
      // each termination made the leader notice and stand by
      const steppedDown = logger.entries.filter(
        (entry) => entry.level === 'warn' && /standing by/.test(entry.msg ?? ''),
      )
      expect(steppedDown.length).toBeGreaterThanOrEqual(3)
      await waitFor('a relay to lead', () => relays.some((relay) => relay.isLeader()))
      expect(relays.filter((relay) => relay.isLeader())).toHaveLength(1)
      expect(await lockHolders()).toBe(1)
    } finally {
      for (const relay of relays) await relay.stop()
    }
  })
})
