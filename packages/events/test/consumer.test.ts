// The consumer runner on real Kafka and PostgreSQL; lost and duplicated effects are counted in each case.
import { AsyncLocalStorage } from 'node:async_hooks'
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { scaledMs, testKafka, uniqueName, waitMs } from '@meridian/testkit'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import type { BatchWork } from '../src/consume-options.ts'
import { consume, type EventConsumer } from '../src/consumer.ts'
import type { DeadLetterInfo } from '../src/dead-letter.ts'
import { createEvent, type DomainEvent } from '../src/envelope.ts'
import { createEventMetrics } from '../src/event-metrics.ts'
import { cleanInbox } from '../src/inbox.ts'
import type { EventProducer } from '../src/kafka.ts'
import {
  applyEffect,
  type EffectsDatabase,
  type EventTopics,
  eventKafka,
  kafkaBrokers,
  keyOf,
  orderCompleted,
  publishEvents,
  readTopics,
  recordingLogger,
  waitFor,
} from './consumer-fixtures.ts'
import { consumerFixture, undoAfterFile } from './file-fixtures.ts'

const kafka = eventKafka('consumer-test')
const afterFile = undoAfterFile()

/** Topics, database and producer of one test, removed after the file. */
async function setup(): Promise<{ topics: EventTopics; db: EffectsDatabase; producer: EventProducer }> {
  return consumerFixture(kafka, afterFile)
}

function stopAfterwards(consumer: EventConsumer): EventConsumer {
  afterFile(() => consumer.stop())
  return consumer
}

/** Lost: published but never applied. Duplicated: applied more than once. */
async function lostAndDuplicated(db: EffectsDatabase, events: DomainEvent[]) {
  const counts = await db.effectCounts()
  return {
    lost: events.filter((event) => !counts.has(event.id)).length,
    duplicated: [...counts.values()].filter((n) => n > 1).length,
  }
}

describe.concurrent('consume', () => {
  it('when the same event is delivered twice, then its effect is applied once', async () => {
    const { topics, db, producer } = await setup()
    const { logger, entries } = recordingLogger()
    const metrics = createEventMetrics(new Registry())
    const twice = orderCompleted('order-twice')
    const next = orderCompleted('order-twice')
    let handled = 0
    stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group: uniqueName('g'),
        logger,
        metrics,
        handler: async (event, tx) => {
          handled++
          await applyEffect(tx, event)
        },
      }),
    )

    // same key, so one partition: when `next` is applied both copies have been through the consumer
    await publishEvents(producer, topics.topic, [twice, twice, next])
    await waitFor('the last event', async () => (await db.effectCounts()).has(next.id))

    expect(await lostAndDuplicated(db, [twice, next])).toEqual({ lost: 0, duplicated: 0 })
    expect(handled).toBe(2)
    expect(
      entries.filter((e) => e.msg?.includes('already processed') && e.fields.eventId === twice.id),
    ).toHaveLength(1)
    expect((await metrics.consumed.get()).values.map((v) => v.value)).toEqual([2])
    const [inbox] = await db.sql<{ n: number }[]>`select count(*)::int as n from inbox`
    expect(inbox?.n).toBe(2)
  })

  it('when the app gives a work context, then each batch runs as its work: what a handler starts without awaiting it still names the batch', async () => {
    const { topics, db, producer } = await setup()
    const { logger } = recordingLogger()
    const storage = new AsyncLocalStorage<BatchWork>()
    const group = uniqueName('g')
    const seen: (BatchWork | undefined)[] = []
    const event = orderCompleted('order-work')
    stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group,
        logger,
        withWork: (work, run) => storage.run(work, run),
        handler: async (each, tx) => {
          // a timer nobody awaits: were it to throw, the process's fatal line would name this work
          setTimeout(() => seen.push(storage.getStore()), 0)
          await applyEffect(tx, each)
        },
      }),
    )
    await publishEvents(producer, topics.topic, [event])
    await waitFor('the timer', async () => seen.length > 0)
    expect(seen).toEqual([
      {
        kind: 'messages',
        consumer: group,
        topic: topics.topic,
        partition: expect.any(Number),
        offsets: expect.stringMatching(/^\d+-\d+$/),
      },
    ])
    expect(storage.getStore()).toBeUndefined()
  })

  it('when events of one partition arrive together and one handler throws, then they shared transactions, the others are applied once, and only that event is retried and dead-lettered', async () => {
    const { topics, db, producer } = await setup()
    // one key, so one partition; published before the consumer starts, so they arrive in one fetch
    const events = Array.from({ length: 12 }, () => orderCompleted('order-shared'))
    const poisoned = events[5] as DomainEvent
    await publishEvents(producer, topics.topic, events)
    const transactionsOf = new Map<string, string>()
    const poisonedRuns: number[] = []
    const deadLettered: DeadLetterInfo[] = []
    stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group: uniqueName('g'),
        logger: recordingLogger().logger,
        retryDelaysMs: [100],
        onDeadLetter: (info) => {
          deadLettered.push(info)
        },
        handler: async (event, tx, context) => {
          if (event.id === poisoned.id) {
            poisonedRuns.push(context.attempt)
            throw new Error('this event can never be applied')
          }
          await applyEffect(tx, event)
          const [row] = await tx<{ id: string }[]>`select txid_current()::text as id`
          transactionsOf.set(event.id, row?.id ?? '')
        },
      }),
    )

    await waitFor('the dead letter', async () => deadLettered.length === 1)
    const survivors = events.filter((event) => event !== poisoned)
    await waitFor('every other event', async () => {
      const counts = await db.effectCounts()
      return survivors.every((event) => counts.has(event.id))
    })
    expect(await lostAndDuplicated(db, survivors)).toEqual({ lost: 0, duplicated: 0 })
    expect((await db.appliedOrder()).map((row) => row.eventId)).toEqual(survivors.map((event) => event.id))
    // once per delivery: the first and its one retry, never a second run within a delivery
    expect(poisonedRuns).toEqual([1, 2])
    expect(deadLettered[0]?.eventId).toBe(poisoned.id)
    // far fewer commits than events: the events before and after the poisoned one were applied together
    expect(new Set(transactionsOf.values()).size).toBeLessThanOrEqual(3)
  })

  it('when a consumer is killed after its effect committed but before its offset commit, then on restart the event is redelivered and skipped, and every effect is applied once', async () => {
    const { topics, db, producer } = await setup()
    const group = uniqueName('g')
    const events = Array.from({ length: 30 }, (_, i) => orderCompleted(`order-${i % 10}`))
    const victim = events[14]!
    await publishEvents(producer, topics.topic, events)

    // The seam: the consumer's afterCommit hook, which runs between the transaction commit and the offset commit,
    // halts the child process there; the test then kills it with SIGKILL.
    const child = spawn(
      process.execPath,
      ['--import', tsxLoader, fileURLToPath(new URL('./consumer-crash-child.ts', import.meta.url))],
      {
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          KAFKA_BROKERS: kafkaBrokers(),
          TOPIC: topics.topic,
          GROUP: group,
          CRASH_AT_EVENT_ID: victim.id,
          KAFKAJS_NO_PARTITIONER_WARNING: '1',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    afterFile(async () => child.kill('SIGKILL'))
    const [partition, offset] = (await lineFrom(child, /^crash-point (\d+) (\d+)$/, scaledMs(waitMs)))
      .slice(1)
      .map(Number)
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))

    expect((await db.effectCounts()).get(victim.id)).toBe(1)
    const admin = testKafka().admin()
    await admin.connect()
    const [committed] = await admin.fetchOffsets({
      groupId: group,
      topics: [topics.topic],
    })
    await admin.disconnect()
    const committedOffset = Number(committed?.partitions.find((p) => p.partition === partition)?.offset ?? -1)
    expect(committedOffset).toBeLessThanOrEqual(offset!)

    const { logger, entries } = recordingLogger()
    stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group,
        logger,
        retryDelaysMs: [],
        handler: (event, tx) => applyEffect(tx, event),
      }),
    )
    await waitFor('every effect', async () => (await db.effectCounts()).size === events.length)
    await waitFor('the redelivered event to be skipped', () =>
      entries.some((e) => e.msg?.includes('already processed') && e.fields.eventId === victim.id),
    )

    expect(await lostAndDuplicated(db, events)).toEqual({ lost: 0, duplicated: 0 })
  })

  it("when many events of several keys arrive on three partitions, then each key's events are applied in the order they were published", async () => {
    const { topics, db, producer } = await setup()
    const keys = Array.from({ length: 20 }, (_, k) => `order-${k}`)
    const events = Array.from({ length: 15 }, () => keys.map((key) => orderCompleted(key))).flat()
    const publishedAt = new Map(events.map((event, i) => [event.id, i]))
    stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group: uniqueName('g'),
        logger: recordingLogger().logger,
        concurrency: 3,
        handler: (event, tx) => applyEffect(tx, event),
      }),
    )

    for (let i = 0; i < events.length; i += 50)
      await publishEvents(producer, topics.topic, events.slice(i, i + 50))
    await waitFor('every effect', async () => (await db.effectCounts()).size === events.length)

    expect(await lostAndDuplicated(db, events)).toEqual({ lost: 0, duplicated: 0 })
    const applied = await db.appliedOrder()
    const partitionsUsed = new Set((await readTopics(kafka, [topics.topic])).map((m) => m.partition))
    expect(partitionsUsed.size).toBe(3)
    for (const key of keys) {
      const order = applied.filter((row) => row.key === key).map((row) => publishedAt.get(row.eventId)!)
      expect(order).toHaveLength(15)
      expect(order).toEqual([...order].sort((a, b) => a - b))
    }
  })

  it("when a retry message belongs to another group, then this group's retry consumer commits past it without acting, and the owner acts on it", async () => {
    const { topics, db, producer } = await setup()
    const [owner, other] = [uniqueName('owner'), uniqueName('other')]
    const event = orderCompleted()
    await producer.publish([
      {
        topic: topics.retry(1),
        key: keyOf(event),
        value: JSON.stringify(event),
        headers: {
          'message-id': event.id,
          'retry-count': '1',
          'original-topic': topics.topic,
          'consumer-group': owner,
          'error-message': 'failed the first time',
          'retry-due-at': String(Date.now()),
        },
      },
    ])
    const admin = testKafka().admin()
    await admin.connect()
    afterFile(() => admin.disconnect())
    const partition = (await admin.fetchTopicOffsets(topics.retry(1))).find((p) => p.high === '1')!.partition

    let otherHandled = 0
    stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group: other,
        logger: recordingLogger().logger,
        handler: async (e, tx) => {
          otherHandled++
          await applyEffect(tx, e)
        },
      }),
    )
    await waitFor('the other group to commit past the retry message', async () => {
      const [committed] = await admin.fetchOffsets({
        groupId: other,
        topics: [topics.retry(1)],
      })
      return committed?.partitions.find((p) => p.partition === partition)?.offset === '1'
    })
    expect(otherHandled).toBe(0)
    expect(await db.sql`select 1 from inbox where consumer_group = ${other}`).toHaveLength(0)
    expect((await db.effectCounts()).size).toBe(0)

    const ownerHandled: number[] = []
    stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group: owner,
        logger: recordingLogger().logger,
        handler: async (e, tx, context) => {
          ownerHandled.push(context.attempt)
          await applyEffect(tx, e)
        },
      }),
    )
    await waitFor('the owner to act on its retry', async () => (await db.effectCounts()).get(event.id) === 1)
    expect(ownerHandled).toEqual([2])
    expect(otherHandled).toBe(0)
    expect(await db.sql`select 1 from inbox where consumer_group = ${owner}`).toHaveLength(1)
  })

  it("when a message is not JSON, has an unknown type, another type than the consumer's or breaks its type's schema, then it goes straight to the dead-letter topic with its error message, and an alert is raised", async () => {
    const { topics, db, producer } = await setup()
    const group = uniqueName('g')
    const { logger, entries } = recordingLogger()
    const metrics = createEventMetrics(new Registry())
    const alerts: DeadLetterInfo[] = []
    const good = orderCompleted('order-good')
    const unknownType = { ...orderCompleted('order-x'), type: 'order.exploded' }
    const badData = { ...orderCompleted('order-y'), data: { orderNumber: 7 } }
    const otherType = createEvent(
      'order.cancelled',
      { orderId: 'order-z', reason: 'no stock' },
      { source: 'test' },
    )
    const poisoned = [
      { key: 'order-j', value: '{"id": "not json', id: 'message-not-json', error: /not JSON/ },
      { key: 'order-x', value: JSON.stringify(unknownType), id: unknownType.id, error: /unknown event type/ },
      { key: 'order-y', value: JSON.stringify(badData), id: badData.id, error: /^order\.completed data/ },
      {
        key: 'order-z',
        value: JSON.stringify(otherType),
        id: otherType.id,
        error: /^event type 'order\.cancelled' on a consumer of 'order\.completed'$/,
      },
    ]
    let handled = 0
    stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group,
        logger,
        metrics,
        onDeadLetter: (info) => {
          alerts.push(info)
        },
        handler: async (event, tx) => {
          handled++
          await applyEffect(tx, event)
        },
      }),
    )

    await producer.publish(
      poisoned.map((p) => ({
        topic: topics.topic,
        key: p.key,
        value: p.value,
        headers: { 'message-id': p.id },
      })),
    )
    await publishEvents(producer, topics.topic, [good])
    await waitFor(
      'four alerts and the good event',
      async () => alerts.length === 4 && (await db.effectCounts()).size === 1,
    )

    const deadLetters = await readTopics(kafka, [topics.dlt])
    expect(deadLetters).toHaveLength(4)
    for (const p of poisoned) {
      const dead = deadLetters.find((m) => m.headers['message-id'] === p.id)
      expect(dead).toMatchObject({
        key: p.key,
        value: p.value,
        headers: { 'original-topic': topics.topic, 'consumer-group': group, 'retry-count': '0' },
      })
      expect(dead?.headers['error-message']).toMatch(p.error)
      expect(new Date(dead?.headers['dead-lettered-at'] ?? '').toISOString()).toBe(
        dead?.headers['dead-lettered-at'],
      )
      expect(alerts.find((a) => a.eventId === p.id)).toMatchObject({
        reason: 'invalid-event',
        topic: topics.topic,
        deadLetterTopic: topics.dlt,
        group,
      })
    }
    expect(await readTopics(kafka, [topics.retry(1), topics.retry(2), topics.retry(3)])).toHaveLength(0)
    expect(handled).toBe(1)
    expect(entries.filter((e) => e.level === 'error' && e.msg === 'event dead-lettered')).toHaveLength(4)
    expect((await metrics.deadLettered.get()).values.map((v) => v.value)).toEqual([4])
    expect(await lostAndDuplicated(db, [good])).toEqual({ lost: 0, duplicated: 0 })
  })

  it('when validation is off, then an envelope of an unknown type reaches the handler, and a message that is not JSON still goes to the dead-letter topic', async () => {
    const { topics, db, producer } = await setup()
    const alerts: DeadLetterInfo[] = []
    const handledTypes: string[] = []
    const unknownType = { ...orderCompleted('order-v2'), type: 'order.completed.v2' }
    stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group: uniqueName('g'),
        logger: recordingLogger().logger,
        validate: false,
        onDeadLetter: (info) => {
          alerts.push(info)
        },
        handler: async (event, tx) => {
          handledTypes.push(event.type)
          await applyEffect(tx, event)
        },
      }),
    )
    await producer.publish([
      { topic: topics.topic, key: 'order-v2', value: 'garbage', headers: { 'message-id': 'garbage-1' } },
      { topic: topics.topic, key: 'order-v2', value: JSON.stringify(unknownType), headers: {} },
    ])
    await waitFor('the unknown type to be handled', async () => (await db.effectCounts()).has(unknownType.id))
    expect(handledTypes).toEqual(['order.completed.v2'])
    expect(alerts).toMatchObject([
      { reason: 'invalid-event', eventId: 'garbage-1', errorMessage: expect.stringMatching(/not JSON/) },
    ])
  })

  it('when inbox entries are older than the retention, then the cleanup removes them and keeps the rest', async () => {
    const { topics, db } = await setup()
    const group = uniqueName('g')
    const other = uniqueName('other')
    const insert = (g: string, id: string, age: string) =>
      db.sql`insert into inbox (consumer_group, event_id, topic, processed_at)
             values (${g}, ${id}, ${topics.topic}, now() - ${age}::interval)`
    const remaining = async () =>
      (
        await db.sql<{ id: string }[]>`select consumer_group || '/' || event_id as id from inbox order by 1`
      ).map((row) => row.id)
    await insert(group, 'day-old', '25 hours')
    await insert(group, 'hour-old', '1 hour')
    await insert(other, 'day-old', '25 hours')

    // the spec's retention, for one group
    expect(await cleanInbox(db.sql, { group })).toBe(1)
    expect(await remaining()).toEqual([`${group}/hour-old`, `${other}/day-old`].sort())

    // a consumer cleans its own group's entries periodically, with the retention it is given
    const consumer = stopAfterwards(
      await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group,
        logger: recordingLogger().logger,
        inboxRetentionMs: 30 * 60_000,
        inboxCleanupIntervalMs: 200,
        handler: (event, tx) => applyEffect(tx, event),
      }),
    )
    await waitFor('the hour-old entry to go', async () => !(await remaining()).includes(`${group}/hour-old`))
    await insert(group, 'two-hours-old', '2 hours')
    await insert(group, 'fresh', '1 minute')
    await waitFor('the next cleanup', async () => !(await remaining()).includes(`${group}/two-hours-old`))
    await consumer.stop()
    expect(await remaining()).toEqual([`${group}/fresh`, `${other}/day-old`].sort())
  })
})

/** tsx's loader (the one scripts/ use), so that the child is one node process: SIGKILL must hit the consumer itself */
const tsxLoader = new URL('../../../infra/node_modules/tsx/dist/esm/index.mjs', import.meta.url).href

/** The first stdout line of `child` matching `pattern`. */
function lineFrom(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    const timer = setTimeout(
      () => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms`)),
      timeoutMs,
    )
    lines.on('line', (line) => {
      const match = pattern.exec(line)
      if (!match) return
      clearTimeout(timer)
      lines.close()
      resolve(match)
    })
    child.once('exit', (code) => reject(new Error(`the consumer process exited (${code}) before ${pattern}`)))
  })
}
