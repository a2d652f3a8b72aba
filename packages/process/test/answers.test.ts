// Correlation by process on real PostgreSQL: the command that asks a step is written with the stamp of the instance and
// step that asked (the `process` header the relay sends), and an answer that carries a stamp back (as the consumer
// gives it: ConsumeContext.answerTo) moves the instance the stamp names, whatever its data says — so the answering
// service needs no ids of the process. An earlier attempt's failure is set aside by the module; an answer stamped for
// another service's process is routed by its data, as an unstamped event is. (The header's trip through the outbox,
// Kafka and the answering consumer is @meridian/events' test: process-stamps.test.ts.)
import type { EventData, EventType, ProcessInstance, ProcessStamp } from '@meridian/contracts'
import { createDatabase, type Sql, transaction } from '@meridian/db'
import { type ConsumeContext, createEvent, type EventHandler, migrateEventTables } from '@meridian/events'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProcessManager, migrateProcessTables, type ProcessManager } from '../src/index.ts'
import {
  beginRenewal,
  createSubscriptionsTable,
  newSubscriptionKey,
  renewalProcess,
  renewalStarted,
  renewalType,
} from './support/renewal.ts'

let database: TestDatabase
let sql: Sql
let manager: ProcessManager

beforeAll(async () => {
  database = await freshDatabase('process_answers')
  sql = createDatabase(database.url, { max: 4, applicationName: 'process-answers-test' })
  await migrateEventTables(sql)
  await migrateProcessTables(sql)
  await createSubscriptionsTable(sql)
  manager = createProcessManager({ sql, processes: [renewalProcess] })
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
  await database?.drop()
})

async function begin(): Promise<string> {
  const owner = await beginRenewal(
    sql,
    (tx, subscription) =>
      manager.start(renewalType, subscription.id, renewalStarted(subscription.periods), tx, {
        owner: subscription,
      }),
    newSubscriptionKey(),
  )
  return owner.id
}

/** The outbox rows of a renewal, with the stamps they were written with. */
const outboxOf = (key: string) =>
  sql<{ eventType: string; command: ProcessStamp | null; answer: ProcessStamp | null }[]>`
    select event_type, process_command::jsonb as command, process_answer::jsonb as answer
    from outbox where aggregate_id = ${key} order by id`

/** The stamp of the last command asked for `key`, as its answer would carry it back. */
async function lastStamp(key: string): Promise<ProcessStamp> {
  const stamped = (await outboxOf(key)).filter((row) => row.command !== null)
  const stamp = stamped.at(-1)?.command
  if (!stamp) throw new Error(`no command of ${key} carries a stamp`)
  return stamp
}

/** An event handed to the manager's handler as the consumer hands it, carrying `answerTo` when given. */
async function deliver<Type extends EventType>(type: Type, data: EventData<Type>, answerTo?: ProcessStamp) {
  const handler = manager.handlers()[type] as EventHandler<Type> | undefined
  if (!handler) throw new Error(`no process follows ${type}`)
  const consumed: ConsumeContext = {
    topic: type,
    partition: 0,
    offset: '0',
    attempt: 1,
    ...(answerTo ? { answerTo } : {}),
  }
  await transaction(sql, (tx) => handler(createEvent(type, data, { source: 'answers-test' }), tx, consumed))
}

const instanceOf = (key: string): Promise<ProcessInstance> => manager.get(renewalType, key)

const charge = (orderId: string) => ({
  orderId,
  customerId: 'customer-1',
  total: 9.9,
  items: [{ productId: 'plan-monthly', quantity: 1, price: 9.9 }],
  paymentId: 'pay-1',
})

async function timeOut(key: string) {
  await sql`
    update process_instances set deadline = now() - interval '1 second' where type = ${renewalType} and key = ${key}`
  expect(await manager.fireDeadlines()).toBe(1)
}

describe('commands carry the stamp of the step that asks', () => {
  it('when a renewal asks its charge, and asks it again on its deadline, then each command carries the instance, step and attempt that asked', async () => {
    const key = await begin()
    await timeOut(key)
    expect(await outboxOf(key)).toEqual([
      {
        eventType: 'payment.requested',
        command: { type: renewalType, key, step: 'charge', attempt: 1 },
        answer: null,
      },
      {
        eventType: 'payment.requested',
        command: { type: renewalType, key, step: 'charge', attempt: 2 },
        answer: null,
      },
    ])
  })
})

describe('answers find their instance by their stamp', () => {
  it('when an answer carries a stamp, then it moves the instance the stamp names, not the one its data names', async () => {
    const asked = await begin()
    const named = await begin()
    // the data names another renewal (or an order): the stamp alone decides
    await deliver('payment.processed', charge(named), await lastStamp(asked))
    expect(await instanceOf(asked)).toMatchObject({ state: 'charged', step: 'extend' })
    expect(await instanceOf(named)).toMatchObject({ state: 'renewing', step: 'charge' })
    const extend = (await outboxOf(asked)).at(-1)
    expect(extend).toMatchObject({
      eventType: 'inventory.reservation_requested',
      command: { type: renewalType, key: asked, step: 'extend', attempt: 1 },
    })
  })

  it('when an answer is stamped for a process this service does not run, then its data routes it, as an unstamped one', async () => {
    const key = await begin()
    const elsewhere: ProcessStamp = {
      type: 'order',
      key: 'another-service-instance',
      step: 'payment',
      attempt: 1,
    }
    await deliver('payment.processed', charge(key), elsewhere)
    expect(await instanceOf(key)).toMatchObject({ state: 'charged' })
  })

  it('when a stamp names no instance, then nothing is written', async () => {
    const [before] = await sql<{ steps: number; outbox: number }[]>`
      select (select count(*)::int from process_steps) as steps, (select count(*)::int from outbox) as outbox`
    const missing: ProcessStamp = { type: renewalType, key: newSubscriptionKey(), step: 'charge', attempt: 1 }
    await deliver('payment.processed', charge(missing.key), missing)
    const [after] = await sql<{ steps: number; outbox: number }[]>`
      select (select count(*)::int from process_steps) as steps, (select count(*)::int from outbox) as outbox`
    expect(after).toEqual(before)
  })

  it("when an earlier attempt's decline arrives after the charge was asked again, then it is logged and counts for nothing; the awaited attempt's counts, and the last one escalates", async () => {
    const key = await begin()
    const first = await lastStamp(key)
    await timeOut(key)
    const second = await lastStamp(key)
    await deliver('payment.failed', { orderId: key, reason: 'card declined' }, first)
    const afterEarlier = await instanceOf(key)
    expect(afterEarlier).toMatchObject({ step: 'charge', attempt: 2, escalated: false })
    expect(afterEarlier.log?.at(-1)).toMatchObject({
      step: 'charge',
      outcome: 'failed',
      attempt: 1,
      detail: "payment.failed (an earlier attempt's answer)",
    })
    await deliver('payment.failed', { orderId: key, reason: 'card declined' }, second)
    expect((await instanceOf(key)).log?.at(-1)).toMatchObject({
      step: 'charge',
      outcome: 'failed',
      attempt: 2,
      detail: 'card declined',
    })
    await timeOut(key)
    // the second attempt's decline, arriving again after the third was asked: set aside, nothing escalated
    await deliver('payment.failed', { orderId: key, reason: 'card declined' }, second)
    expect(await instanceOf(key)).toMatchObject({ attempt: 3, escalated: false })
    await deliver('payment.failed', { orderId: key, reason: 'card declined' }, await lastStamp(key))
    expect(await instanceOf(key)).toMatchObject({ attempt: 3, escalated: true })
  })
})
