// A third process, declared in the tests only (support/renewal.ts: a subscription's renewal), run by the module's
// manager on real PostgreSQL: started with its owner's row and its first command in one transaction, moved by catalogue
// events, timed by the clock, escalated, retried and compensated by operators, listed — no code of its own in the module.
import { AppError, type EventData, type EventType, type ProcessInstance } from '@meridian/contracts'
import { createDatabase, type Queryable, type Sql, transaction } from '@meridian/db'
import { createEvent, type EventHandler, migrateEventTables } from '@meridian/events'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  createProcessManager,
  migrateProcessTables,
  type ProcessAlerts,
  type ProcessManager,
} from '../src/index.ts'
import {
  beginRenewal,
  createSubscriptionsTable,
  newSubscriptionKey,
  renewalProcess,
  renewalStarted,
  renewalType,
  type Subscription,
  stepWaitMs,
} from './support/renewal.ts'

type Escalation = Parameters<ProcessAlerts['escalated']>[0]

let database: TestDatabase
let sql: Sql
let manager: ProcessManager
let escalations: Escalation[]

beforeAll(async () => {
  database = await freshDatabase('process_example')
  sql = createDatabase(database.url, { max: 6, applicationName: 'process-example-test' })
  await migrateEventTables(sql)
  await migrateProcessTables(sql)
  await createSubscriptionsTable(sql)
  manager = managerWith((details) => escalations.push(details))
})

beforeEach(() => {
  escalations = []
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
  await database?.drop()
})

function managerWith(escalated: (details: Escalation) => void = () => {}): ProcessManager {
  return createProcessManager({ sql, processes: [renewalProcess], alerts: { escalated } })
}

/** A subscription whose renewal has begun: its charge asked. */
function begin(key: string = newSubscriptionKey()): Promise<Subscription> {
  return beginRenewal(sql, (tx, owner) => startIn(tx, owner), key)
}

const startIn = (tx: Queryable, owner: Subscription) =>
  manager.start(renewalType, owner.id, renewalStarted(owner.periods), tx, {
    owner,
    source: { eventType: 'subscription.due' },
  })

const consumed = { topic: 'test', partition: 0, offset: '0', attempt: 1 }

/** A catalogue event handed to the manager's handler of its type, in a consumer's transaction of its own. */
async function deliver<Type extends EventType>(type: Type, data: EventData<Type>) {
  const event = createEvent(type, data, { source: 'example-test' })
  const handler = manager.handlers()[type] as EventHandler<Type> | undefined
  if (!handler) throw new Error(`no process follows ${type}`)
  await transaction(sql, (tx) => handler(event, tx, consumed))
  return event
}

const charged = (key: string, paymentId = 'pay-1') =>
  deliver('payment.processed', {
    orderId: key,
    customerId: 'customer-1',
    total: 9.9,
    items: [{ productId: 'plan-monthly', quantity: 1, price: 9.9 }],
    paymentId,
  })

const instanceOf = (key: string): Promise<ProcessInstance> => manager.get(renewalType, key)

async function outboxOf(key: string) {
  return sql<{ eventType: string; data: Record<string, unknown> }[]>`
    select event_type, payload -> 'data' as data from outbox where aggregate_id = ${key} order by id`
}

async function subscriptionOf(key: string) {
  const [row] = await sql<{ status: string; periods: number }[]>`
    select status, periods from subscriptions where id = ${key}`
  return row
}

/** The awaited step's deadline passed (the step's waits are a minute long: only this makes one pass). */
async function makeDue(...keys: string[]) {
  await sql`
    update process_instances set deadline = now() - interval '1 second'
    where type = ${renewalType} and key in ${sql(keys)}`
}

async function timeOut(key: string) {
  await makeDue(key)
  expect(await manager.fireDeadlines()).toBe(1)
}

/** A renewal whose charge went unanswered three times: escalated to operators. */
async function escalatedRenewal(): Promise<string> {
  const { id } = await begin()
  for (let attempt = 1; attempt <= 3; attempt++) await timeOut(id)
  return id
}

async function expectConflict(action: Promise<unknown>, message: RegExp) {
  const error = await action.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(AppError)
  expect(error).toMatchObject({ statusCode: 409, code: 'CONFLICT' })
  expect((error as Error).message).toMatch(message)
}

describe('starting', () => {
  it('when a renewal starts, then its instance, its first log line and its charge command are written with the owner', async () => {
    const { id } = await begin()
    const renewal = await instanceOf(id)
    expect(renewal).toMatchObject({
      type: 'renewal',
      id,
      state: 'renewing',
      step: 'charge',
      attempt: 1,
      compensation: 'none',
      escalated: false,
      data: {},
    })
    expect(renewal.deadline).not.toBeNull()
    expect(renewal.log).toEqual([
      expect.objectContaining({
        step: 'charge',
        outcome: 'requested',
        attempt: 1,
        eventType: 'subscription.due',
      }),
    ])
    expect(renewal._links).toMatchObject({
      self: { href: `/api/v1/admin/processes/renewal/${id}`, method: 'GET' },
      subscription: { href: `/api/v1/subscriptions/${id}`, method: 'GET' },
      retry: { href: `/api/v1/admin/processes/renewal/${id}/retry`, method: 'POST' },
      compensate: { href: `/api/v1/admin/processes/renewal/${id}/compensate`, method: 'POST' },
    })
    expect(await outboxOf(id)).toEqual([
      {
        eventType: 'payment.requested',
        data: expect.objectContaining({ orderId: id, customerId: 'customer-1', total: 9.9, attempt: 1 }),
      },
    ])
    expect(await subscriptionOf(id)).toEqual({ status: 'renewing', periods: 0 })
  })

  it('when the transaction that starts a renewal rolls back, then neither its owner, its instance, its log nor its command remain', async () => {
    const key = newSubscriptionKey()
    await expect(
      beginRenewal(
        sql,
        async (tx, owner) => {
          await startIn(tx, owner)
          throw new Error('the use case failed after the start')
        },
        key,
      ),
    ).rejects.toThrow('the use case failed after the start')
    const [counts] = await sql<{ instances: number; steps: number; subscriptions: number }[]>`
      select (select count(*)::int from process_instances where key = ${key}) as instances,
        (select count(*)::int from process_steps where key = ${key}) as steps,
        (select count(*)::int from subscriptions where id = ${key}) as subscriptions`
    expect(counts).toEqual({ instances: 0, steps: 0, subscriptions: 0 })
    expect(await outboxOf(key)).toEqual([])
  })
})

describe('events', () => {
  it('when the charge and the extension answer, then the instance moves, its log grows and its owner is written with it', async () => {
    const { id } = await begin()
    const payment = await charged(id)
    expect(await instanceOf(id)).toMatchObject({
      state: 'charged',
      step: 'extend',
      attempt: 1,
      data: { paymentId: 'pay-1' },
    })
    expect(await subscriptionOf(id)).toEqual({ status: 'charged', periods: 0 })
    expect((await outboxOf(id)).map((each) => each.eventType)).toEqual([
      'payment.requested',
      'inventory.reservation_requested',
    ])
    expect((await outboxOf(id))[1]?.data).toMatchObject({ orderId: id, paymentId: 'pay-1', attempt: 1 })

    const reserved = await deliver('inventory.reserved', {
      orderId: id,
      reservationId: 'res-1',
      items: [{ productId: 'plan-monthly', quantity: 1 }],
    })
    const renewal = await instanceOf(id)
    expect(renewal).toMatchObject({ state: 'renewed', step: null, deadline: null, escalated: false })
    expect(renewal._links.retry).toBeUndefined()
    expect(renewal._links.compensate).toBeUndefined()
    expect(await subscriptionOf(id)).toEqual({ status: 'renewed', periods: 1 })
    expect(
      renewal.log?.map(({ step, outcome, eventType, eventId }) => ({ step, outcome, eventType, eventId })),
    ).toEqual([
      { step: 'charge', outcome: 'requested', eventType: 'subscription.due', eventId: undefined },
      { step: 'charge', outcome: 'succeeded', eventType: 'payment.processed', eventId: payment.id },
      { step: 'extend', outcome: 'requested', eventType: 'payment.processed', eventId: payment.id },
      { step: 'extend', outcome: 'succeeded', eventType: 'inventory.reserved', eventId: reserved.id },
    ])
  })

  it("when the consumer's transaction rolls back after the event was applied, then the instance, its owner, log and outbox are as before", async () => {
    const { id } = await begin()
    const before = {
      instance: await instanceOf(id),
      owner: await subscriptionOf(id),
      outbox: await outboxOf(id),
    }
    const event = createEvent(
      'payment.processed',
      {
        orderId: id,
        customerId: 'customer-1',
        total: 9.9,
        items: [{ productId: 'plan-monthly', quantity: 1, price: 9.9 }],
        paymentId: 'pay-1',
      },
      { source: 'example-test' },
    )
    const handler = manager.handlers()['payment.processed'] as EventHandler<'payment.processed'>
    await expect(
      transaction(sql, async (tx) => {
        await handler(event, tx, consumed)
        // the write happened in the transaction: what rolls back below is real
        const [moved] = await tx<{ state: string }[]>`
          select state from process_instances where type = ${renewalType} and key = ${id}`
        expect(moved?.state).toBe('charged')
        throw new Error('the consumer failed after the process moved')
      }),
    ).rejects.toThrow('the consumer failed after the process moved')
    expect({
      instance: await instanceOf(id),
      owner: await subscriptionOf(id),
      outbox: await outboxOf(id),
    }).toEqual(before)
  })

  it('when an event names no renewal (an order id, an unknown subscription), then nothing is written', async () => {
    const [before] = await sql<{ steps: number; outbox: number }[]>`
      select (select count(*)::int from process_steps) as steps, (select count(*)::int from outbox) as outbox`
    await charged('0b9f0a4e-6f7d-4c39-9e55-5b1d0c0f2a11')
    await charged('sub-nobody-has-this-one')
    const [after] = await sql<{ steps: number; outbox: number }[]>`
      select (select count(*)::int from process_steps) as steps, (select count(*)::int from outbox) as outbox`
    expect(after).toEqual(before)
  })

  it('when a declined charge answers before its last attempt, then the renewal keeps waiting for the clock', async () => {
    const { id } = await begin()
    const before = await instanceOf(id)
    await deliver('payment.failed', { orderId: id, reason: 'card declined' })
    const after = await instanceOf(id)
    expect(after).toMatchObject({ state: 'renewing', step: 'charge', attempt: 1, escalated: false })
    expect(after.deadline).toBe(before.deadline)
    expect(after.log?.at(-1)).toMatchObject({
      step: 'charge',
      outcome: 'failed',
      attempt: 1,
      detail: 'card declined',
    })
    expect(escalations).toEqual([])
  })
})

describe('deadlines', () => {
  it('when nothing is due, then the clock fires nothing', async () => {
    await begin()
    expect(await manager.fireDeadlines()).toBe(0)
  })

  it('when a step’s deadline passes, then the clock asks it again at the next attempt with a doubled wait', async () => {
    const { id } = await begin()
    await timeOut(id)
    const renewal = await instanceOf(id)
    expect(renewal).toMatchObject({ state: 'renewing', step: 'charge', attempt: 2, escalated: false })
    expect(renewal.log?.slice(-2)).toEqual([
      expect.objectContaining({ step: 'charge', outcome: 'timed_out', attempt: 1, eventType: 'timeout' }),
      expect.objectContaining({ step: 'charge', outcome: 'requested', attempt: 2, eventType: 'timeout' }),
    ])
    const [wait] = await sql<{ seconds: number }[]>`
      select extract(epoch from deadline - updated_at)::float8 as seconds
      from process_instances where type = ${renewalType} and key = ${id}`
    expect(wait?.seconds).toBe((2 * stepWaitMs) / 1000)
    expect((await outboxOf(id)).map((each) => [each.eventType, each.data.attempt])).toEqual([
      ['payment.requested', 1],
      ['payment.requested', 2],
    ])
  })

  it('when the last attempt times out, then the step is escalated: listed with escalated=true, the alert called, nothing awaited', async () => {
    const id = await escalatedRenewal()
    expect(escalations).toEqual([
      { type: 'renewal', key: id, step: 'charge', reason: 'the charge step did not answer after 3 attempts' },
    ])
    const renewal = await instanceOf(id)
    expect(renewal).toMatchObject({
      state: 'renewing',
      step: 'charge',
      attempt: 3,
      deadline: null,
      escalated: true,
      escalation: 'the charge step did not answer after 3 attempts',
    })
    expect(renewal.log?.at(-1)).toMatchObject({ step: 'charge', outcome: 'escalated', attempt: 3 })
    const listed = await manager.list(
      { page: 1, limit: 100, type: renewalType, escalated: true },
      '/api/v1/admin/processes',
    )
    expect(listed.data.map((each) => each.id)).toContain(id)
    expect(listed.data.every((each) => each.escalated)).toBe(true)
  })

  it('when a declined charge answers after the step was escalated, then nothing is escalated again', async () => {
    const id = await escalatedRenewal()
    escalations = []
    await deliver('payment.failed', { orderId: id, reason: 'card declined' })
    expect(escalations).toEqual([])
    const renewal = await instanceOf(id)
    expect(renewal).toMatchObject({ attempt: 3, escalated: true, deadline: null })
    expect(renewal.log?.at(-1)).toMatchObject({
      step: 'charge',
      outcome: 'failed',
      detail: 'card declined (not awaited)',
    })
  })

  it('when a late answer moves an escalated renewal on to its next step, then the escalation is over and that step runs on its clock', async () => {
    const id = await escalatedRenewal()
    await charged(id)
    const moved = await instanceOf(id)
    expect(moved).toMatchObject({ state: 'charged', step: 'extend', attempt: 1, escalated: false })
    expect(moved.escalation).toBeUndefined()
    expect(moved.deadline).not.toBeNull()
    await timeOut(id)
    expect(await instanceOf(id)).toMatchObject({ step: 'extend', attempt: 2, escalated: false })
  })

  it('when one due instance cannot be decided on, then the others still fire and the round fails naming it', async () => {
    const [broken, healthy] = [await begin(), await begin()]
    // a step a newer declaration no longer has: its decision throws
    await sql`update process_instances set step = 'vanished' where type = ${renewalType} and key = ${broken.id}`
    await makeDue(broken.id, healthy.id)
    const failure = await manager.fireDeadlines().then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(failure).toBeInstanceOf(AggregateError)
    expect((failure as AggregateError).message).toBe('1 due process deadline(s) failed to fire; 1 fired')
    expect((failure as AggregateError).errors.map((each: Error) => each.message)).toEqual([
      `the deadline of renewal process ${broken.id} failed to fire`,
    ])
    expect(await instanceOf(healthy.id)).toMatchObject({ attempt: 2 })
    expect(await instanceOf(broken.id)).toMatchObject({ step: 'vanished', attempt: 1 })
    // out of the clock's way for the tests after this one
    await sql`update process_instances set deadline = null where type = ${renewalType} and key = ${broken.id}`
  })

  it('when two managers race for the same due instances, then each instance fires once', async () => {
    const keys: string[] = []
    for (let each = 0; each < 8; each++) keys.push((await begin()).id)
    await makeDue(...keys)
    const other = managerWith()
    const [first, second] = await Promise.all([manager.fireDeadlines(), other.fireDeadlines()])
    expect(first + second).toBe(keys.length)
    const rows = await sql<{ key: string; attempt: number; timeouts: number; asks: number }[]>`
      select p.key, p.attempt,
        (select count(*)::int from process_steps s
          where s.type = p.type and s.key = p.key and s.outcome = 'timed_out') as timeouts,
        (select count(*)::int from outbox o
          where o.aggregate_id = p.key and o.event_type = 'payment.requested') as asks
      from process_instances p where p.type = ${renewalType} and p.key in ${sql(keys)}`
    expect(rows).toHaveLength(keys.length)
    for (const row of rows) expect(row).toEqual({ key: row.key, attempt: 2, timeouts: 1, asks: 2 })
  })
})

describe('operators', () => {
  it('when an operator retries an escalated step, then it is asked again from attempt 1 and no longer escalated', async () => {
    const id = await escalatedRenewal()
    const renewal = await manager.retry(renewalType, id)
    expect(renewal).toMatchObject({ state: 'renewing', step: 'charge', attempt: 1, escalated: false })
    expect(renewal.escalation).toBeUndefined()
    expect(renewal.deadline).not.toBeNull()
    expect(renewal.log?.at(-1)).toMatchObject({
      step: 'charge',
      outcome: 'operator',
      attempt: 1,
      eventType: 'operator',
      eventId: 'operator.retry',
    })
    expect((await outboxOf(id)).map((each) => each.data.attempt)).toEqual([1, 2, 3, 1])
    const listed = await manager.list(
      { page: 1, limit: 100, type: renewalType, escalated: true },
      '/api/v1/admin/processes',
    )
    expect(listed.data.map((each) => each.id)).not.toContain(id)
  })

  it('when an operator compensates a charged renewal, then its refund runs and, answered, the renewal is refunded', async () => {
    const { id } = await begin()
    await charged(id)
    const compensating = await manager.compensate(renewalType, id, 'the customer cancelled')
    expect(compensating).toMatchObject({
      state: 'refunding',
      step: 'refund',
      attempt: 1,
      compensation: 'running',
      failedStep: 'operator',
      failureReason: 'the customer cancelled',
    })
    expect((await outboxOf(id)).at(-1)).toEqual({
      eventType: 'payment.refund_requested',
      data: expect.objectContaining({ orderId: id, reason: 'the customer cancelled', attempt: 1 }),
    })
    await deliver('payment.refunded', { orderId: id, paymentId: 'pay-1', amount: 9.9, cause: 'compensation' })
    expect(await instanceOf(id)).toMatchObject({
      state: 'refunded',
      step: null,
      compensation: 'done',
      deadline: null,
    })
    expect(await subscriptionOf(id)).toEqual({ status: 'refunded', periods: 0 })
  })

  it('when the extension fails and its refund goes unanswered, then the compensation is escalated', async () => {
    const { id } = await begin()
    await charged(id)
    await deliver('inventory.failed', { orderId: id, reason: 'the plan was withdrawn' })
    expect(await instanceOf(id)).toMatchObject({
      state: 'refunding',
      step: 'refund',
      compensation: 'running',
    })
    await timeOut(id)
    await timeOut(id)
    expect(escalations).toEqual([
      {
        type: 'renewal',
        key: id,
        step: 'refund',
        reason: 'the refund compensation did not answer after 2 attempts',
      },
    ])
    const renewal = await instanceOf(id)
    expect(renewal).toMatchObject({ compensation: 'escalated', escalated: true, deadline: null })
    const listed = await manager.list(
      { page: 1, limit: 100, type: renewalType, compensation: 'escalated' },
      '/api/v1/admin/processes',
    )
    expect(listed.data.map((each) => each.id)).toEqual([id])
  })

  it("when an operator's action is refused by the instance's state, then the manager answers 409 and changes nothing", async () => {
    const { id } = await begin()
    await charged(id)
    await deliver('inventory.reserved', { orderId: id, reservationId: 'res-1', items: [] })
    const before = await instanceOf(id)
    await expectConflict(manager.retry(renewalType, id), /^the renewal waits for no step \(renewed\)$/)
    await expectConflict(
      manager.compensate(renewalType, id),
      /^the renewal is renewed: there is nothing to compensate$/,
    )
    expect(await instanceOf(id)).toEqual(before)
  })

  it('when an operator names an unknown type or instance, then the manager answers 404', async () => {
    for (const action of [
      () => manager.retry('subscription', 'sub-1'),
      () => manager.compensate(renewalType, 'sub-nobody-has-this-one'),
      () => manager.get(renewalType, 'sub-nobody-has-this-one'),
      () => manager.list({ page: 1, limit: 10, type: 'subscription' }, '/api/v1/admin/processes'),
    ]) {
      await expect(action()).rejects.toMatchObject({ statusCode: 404, code: 'NOT_FOUND' })
    }
  })
})

describe('listing', () => {
  it('when instances are listed by type and state, then they come newest first, a page at a time', async () => {
    const keys: string[] = []
    for (let each = 0; each < 3; each++) {
      const { id } = await begin()
      await manager.compensate(renewalType, id, 'nothing was charged yet')
      keys.push(id)
    }
    const query = { page: 1, limit: 2, type: renewalType, state: 'cancelled' } as const
    const first = await manager.list(query, '/api/v1/admin/processes')
    expect(first.data.map((each) => each.id)).toEqual([keys[2], keys[1]])
    expect(first.data.every((each) => each.state === 'cancelled' && each.log === undefined)).toBe(true)
    expect(first.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 })
    expect(first.links.next).toMatch(/^\/api\/v1\/admin\/processes\?.*page=2/)
    const second = await manager.list({ ...query, page: 2 }, '/api/v1/admin/processes')
    expect(second.data.map((each) => each.id)).toEqual([keys[0]])
    expect(second.links.next).toBeNull()
  })
})
