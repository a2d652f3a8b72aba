// OutboxRelay on real PostgreSQL and Kafka: the NOTIFY wake-up, the lag gauges, marking instead of deleting.
import { once } from 'node:events'
import { Socket } from 'node:net'
import type { Sql } from '@meridian/db'
import type { TestTopics } from '@meridian/testkit'
import postgres from 'postgres'
import { Registry } from 'prom-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createEventMetrics, type EventMetrics } from '../src/event-metrics.ts'
import type { EventProducer } from '../src/kafka.ts'
import { createOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from '../src/outbox-relay.ts'
import {
  delay,
  EffectCounter,
  NetworkSwitch,
  type OutboxDatabase,
  outboxDatabase,
  outboxTopics,
  recordingLogger,
  testProducer,
  waitFor,
  writeWidget,
} from './relay-fixtures.ts'

let database: OutboxDatabase
let sql: Sql
let topics: TestTopics
let counter: EffectCounter
let producer: EventProducer
/** relays and producers a test started, stopped after it */
const cleanups: (() => Promise<void>)[] = []

beforeAll(async () => {
  database = await outboxDatabase('relay')
  sql = database.sql
  topics = await outboxTopics(['relay-notify', 'relay-relisten', 'relay-poll', 'relay-lag', 'relay-mark'])
  counter = await EffectCounter.start(Object.values(topics.names))
  producer = await testProducer()
})

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  // one test's leftovers must not show in the next one's gauges
  await sql`delete from outbox`
})

afterAll(async () => {
  await producer?.disconnect()
  await counter?.stop()
  await topics?.delete()
  await database?.drop()
})

function topic(base: string): string {
  const name = topics.names[base]
  if (!name) throw new Error(`no topic ${base}`)
  return name
}

function startRelay(options: Partial<OutboxRelayOptions>): Promise<OutboxRelay> {
  return startRelayOn(sql, options)
}

async function startRelayOn(on: Sql, options: Partial<OutboxRelayOptions>): Promise<OutboxRelay> {
  const relay = createOutboxRelay({
    sql: on,
    producer,
    logger: recordingLogger(),
    leadershipRetryMs: 100,
    ...options,
  })
  cleanups.push(() => relay.stop())
  await relay.start()
  await waitFor('the relay to lead', () => relay.isLeader())
  return relay
}

async function gauge(metric: EventMetrics['outboxPending']): Promise<number | undefined> {
  return (await metric.get()).values[0]?.value
}

describe('OutboxRelay', () => {
  it('when a row commits while the relay waits out a long poll interval, then NOTIFY wakes it and the event is published before that poll', async () => {
    const pollIntervalMs = 60_000
    let pollIntervalElapsed = false
    const timer = setTimeout(() => {
      pollIntervalElapsed = true
    }, pollIntervalMs)
    cleanups.push(async () => clearTimeout(timer))

    // published by the relay's first pass; once it is out, the relay is waiting for its next poll
    const first = await writeWidget(sql, topic('relay-notify'), 'n-1', 1)
    await startRelay({ pollIntervalMs, listen: true })
    await waitFor('the first event', () => counter.has(first.entries[0]!.event.id))

    const second = await writeWidget(sql, topic('relay-notify'), 'n-1', 2)
    await waitFor('the second event', () => counter.has(second.entries[0]!.event.id))
    expect(pollIntervalElapsed).toBe(false)
    expect(counter.account([first, second], topic('relay-notify'))).toEqual({
      lost: 0,
      duplicated: 0,
      unexpected: 0,
    })
  })

  it('when the database goes away and comes back (a restart, a failover), then the relay listens again', async () => {
    // every connection of this client, the relay's session and its LISTEN among them, goes through a switch
    const sockets = new Set<Socket>()
    let down = false
    const switched = postgres(database.url, {
      max: 2,
      onnotice: () => {},
      connection: { application_name: 'relay-relisten' },
      socket: async ({ host, port }: { host: string[]; port: number[] }) => {
        if (down) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
        const socket = new Socket()
        socket.connect(port[0] ?? 5432, host[0] ?? '127.0.0.1')
        await once(socket, 'connect')
        sockets.add(socket)
        socket.once('close', () => sockets.delete(socket))
        return socket
      },
    } as postgres.Options<Record<string, postgres.PostgresType>>)
    cleanups.push(() => switched.end({ timeout: 1 }))
    /** the server's sessions of this client whose last statement was a LISTEN */
    const listening = async () => {
      const [row] = await sql<{ count: number }[]>`
        select count(*)::int as count from pg_stat_activity
        where application_name = 'relay-relisten' and query ilike 'listen %'`
      return row?.count ?? 0
    }
    const relay = await startRelayOn(switched, { pollIntervalMs: 200, listen: true })
    await waitFor('the relay to listen', async () => (await listening()) === 1)

    // the server is gone for a moment: postgres.js's one attempt to listen again is refused
    down = true
    for (const socket of sockets) socket.destroy()
    await waitFor('the relay to notice', () => !relay.isLeader())
    await waitFor('the server to see the sessions gone', async () => (await listening()) === 0)
    await delay(500)
    down = false
    await waitFor('the relay to lead again', () => relay.isLeader())
    await waitFor('the relay to listen again', async () => (await listening()) === 1)

    const event = await writeWidget(sql, topic('relay-relisten'), 'l-1', 1)
    await waitFor('the event after the outage', () => counter.has(event.entries[0]!.event.id))
    expect(counter.account([event], topic('relay-relisten'))).toEqual({
      lost: 0,
      duplicated: 0,
      unexpected: 0,
    })
  })

  it('when listening is off and the poll interval is long, then a committed row waits for the next poll', async () => {
    const first = await writeWidget(sql, topic('relay-poll'), 'p-1', 1)
    await startRelay({ pollIntervalMs: 60_000, listen: false })
    await waitFor('the first event', () => counter.has(first.entries[0]!.event.id))

    const second = await writeWidget(sql, topic('relay-poll'), 'p-1', 2)
    await delay(1500)
    expect(counter.has(second.entries[0]!.event.id)).toBe(false)
    const [row] = await sql<{ pending: number }[]>`select count(*)::int as pending from outbox`
    expect(row!.pending).toBe(1)
  })

  it('when rows cannot be published, then the pending and lag gauges show their count and the oldest age, and drop to 0 once they are', async () => {
    // Kafka is unreachable for this relay only: its client's network is cut (the shared broker keeps running).
    const network = new NetworkSwitch()
    const cutProducer = await testProducer(network)
    cleanups.push(() => cutProducer.disconnect())
    network.cut()
    const writes = [
      await writeWidget(sql, topic('relay-lag'), 'l-1', 1),
      await writeWidget(sql, topic('relay-lag'), 'l-1', 2),
      await writeWidget(sql, topic('relay-lag'), 'l-2', 1),
    ]
    await sql`update outbox set created_at = created_at - interval '30 seconds'`
    const metrics = createEventMetrics(new Registry())
    await startRelay({ producer: cutProducer, metrics, maxBackoffMs: 500 })

    await waitFor('the pending gauge', async () => (await gauge(metrics.outboxPending)) === 3)
    expect(await gauge(metrics.outboxLagSeconds)).toBeGreaterThanOrEqual(30)
    expect(writes.some((write) => counter.has(write.entries[0]!.event.id))).toBe(false)

    network.restore()
    await waitFor('every event', () => writes.every((write) => counter.has(write.entries[0]!.event.id)))
    await waitFor('the gauges to fall', async () => (await gauge(metrics.outboxPending)) === 0)
    expect(await gauge(metrics.outboxLagSeconds)).toBe(0)
    expect(counter.account(writes, topic('relay-lag'))).toEqual({ lost: 0, duplicated: 0, unexpected: 0 })
    const published = await metrics.published.get()
    expect(published.values).toEqual([
      expect.objectContaining({ labels: { topic: topic('relay-lag') }, value: 3 }),
    ])
  })

  it('when the relay marks instead of deleting, then published rows stay marked and rows past retention are removed', async () => {
    await sql`
      insert into outbox (event_type, aggregate_id, payload, published, published_at, created_at)
      values (${topic('relay-mark')}, 'old', '{}'::jsonb, true, now() - interval '8 days', now() - interval '8 days')`
    const writes = [
      await writeWidget(sql, topic('relay-mark'), 'm-1', 1),
      await writeWidget(sql, topic('relay-mark'), 'm-1', 2),
    ]
    await startRelay({ mode: 'mark' })

    await waitFor('both events', () => writes.every((write) => counter.has(write.entries[0]!.event.id)))
    await waitFor('both rows marked', async () => {
      const [row] = await sql<{ marked: number }[]>`
        select count(*)::int as marked from outbox where published and published_at is not null`
      return row!.marked === 2
    })
    const rows = await sql<{ aggregateId: string }[]>`select aggregate_id from outbox order by id`
    expect(rows.map((row) => row.aggregateId)).toEqual(['m-1', 'm-1'])
    expect(counter.account(writes, topic('relay-mark'))).toEqual({ lost: 0, duplicated: 0, unexpected: 0 })
  })
})
