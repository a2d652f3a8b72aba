// What placing an order and each saga event cost in statements sent to PostgreSQL, counted as the pool sends them
// (createDatabase's onQuery): on this service's machine a statement's round trip, not its rows, is what an event
// pays for, so each path has a budget here that cannot grow back unnoticed. Counts, never timings.
import { randomUUID } from 'node:crypto'
import type { ProductSummary } from '@meridian/contracts'
import { transaction } from '@meridian/db'
import { asUser, eventually, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SagaFact } from '../src/domain/saga-machine.ts'
import { buildOrderTestApp, type OrderTestApp } from './support/app.ts'
import { type InventoryStandIn, startInventoryStandIn } from './support/inventory-stand-in.ts'
import { placeTestOrder, testAddress } from './support/place.ts'

/**
 * Statements of the order service's own per path, the transaction's begin and commit aside (they are the caller's:
 * the consumer's shared transaction or the request's). Before issue 30: placing 5, payment.processed 5,
 * inventory.reserved 10 (the order, its items, its saga and its token read again for shipment.requested),
 * shipment.created 5, shipment.delivered 6, inventory.failed 7, a deadline fired 12.
 */
const budget = {
  /** the order with its items, the saga with its first log line, order.placed in the outbox */
  place: 3,
  /** with an Idempotency-Key: the read of the order placed with it (none), then as place */
  placeWithKey: 4,
  /** a retry with the same key and body: that read alone (nothing priced or written) */
  replay: 1,
  /** the read that locks the order and its saga; the write of the saga, the order's status and the log */
  noCommand: 2,
  /** as noCommand, and one outbox statement per command */
  perCommand: 1,
  /** GET /orders/{id}: the order with its items and its saga's ids (was 3) */
  read: 1,
  /** POST /orders/{id}/cancel: the order's row locked and checked for the caller, then as an event (was 8) */
  cancelCheck: 1,
  /** a round of the saga's clock: the due instances, then per instance as an event (the read also checks it is due) */
  dueOrders: 1,
} as const

const mug: ProductSummary = { id: randomUUID(), name: 'Blue mug', price: 19.99, available: 10, active: true }
let inventory: InventoryStandIn
let order: OrderTestApp
/** an app (a database) of its own whose payment step times out at once; its deadlines are fired by the test */
let hurried: OrderTestApp
/** what the apps' pools sent since the last statementsOf began */
let sent: string[] = []

beforeAll(async () => {
  inventory = await startInventoryStandIn([mug])
  // the deadline sweep's first round comes a minute after the start: none of its statements is counted here
  const env = { ...tokenEnv, INVENTORY_SERVICE_NAME: inventory.name, SAGA_SWEEP_INTERVAL_MS: '60000' }
  const onQuery = (query: string) => sent.push(query)
  order = await buildOrderTestApp(env, { onQuery })
  hurried = await buildOrderTestApp({ ...env, SAGA_STEP_TIMEOUT_MS: '100' }, { onQuery })
})

afterAll(async () => {
  await hurried?.close()
  await order?.close()
  await inventory?.close()
})

const ownStatements = (statements: string[]) =>
  statements.filter((statement) => !/^\s*(begin|commit|rollback)\b/i.test(statement))

/** The statements `work` sent, its transaction's begin and commit left out. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  sent = []
  await work()
  return ownStatements(sent)
}

const place = (app: OrderTestApp = order, customerId = randomUUID()): Promise<string> =>
  placeTestOrder(app, mug.id, customerId)

/** The fact applied as the consumer applies it: in a transaction, with the event it came with. */
const apply = (orderId: string, fact: SagaFact) =>
  statementsOf(() =>
    transaction(order.sql, (tx) =>
      order.saga.onEvent(orderId, fact, tx, { eventType: fact.kind, eventId: randomUUID() }),
    ),
  )

const outboxTypes = async (orderId: string, app: OrderTestApp = order) =>
  (
    await app.sql<{ eventType: string }[]>`
      select event_type from outbox where aggregate_id = ${orderId} order by id`
  ).map((row) => row.eventType)

describe('statements per order', () => {
  it(`when an order is placed, then it costs at most ${budget.place} statements of its own`, async () => {
    let orderId = ''
    const statements = await statementsOf(async () => {
      orderId = await place()
    })
    expect(statements.length, statements.join('\n---\n')).toBeLessThanOrEqual(budget.place)
    expect(await outboxTypes(orderId)).toEqual(['order.placed'])
    const [saga] = await order.sql`select state from sagas where order_id = ${orderId}`
    expect(saga?.state).toBe('created')
  })

  it(`when an order is placed with an Idempotency-Key, then it costs at most ${budget.placeWithKey} statements, and its retry ${budget.replay}`, async () => {
    const customerId = randomUUID()
    const request = {
      method: 'POST' as const,
      url: '/api/v1/orders',
      payload: {
        customerId,
        items: [{ productId: mug.id, quantity: 2, price: 19.99 }],
        shippingAddress: testAddress,
      },
      headers: { ...asUser(customerId), 'idempotency-key': randomUUID() },
    }
    let orderId = ''
    const first = await statementsOf(async () => {
      const answer = await order.app.inject(request)
      expect(answer.statusCode).toBe(201)
      orderId = answer.json().orderId
    })
    expect(first.length, first.join('\n---\n')).toBeLessThanOrEqual(budget.placeWithKey)
    const retry = await statementsOf(async () => {
      const answer = await order.app.inject(request)
      expect(answer.statusCode).toBe(201)
      expect(answer.json().orderId).toBe(orderId)
    })
    expect(retry.length, retry.join('\n---\n')).toBeLessThanOrEqual(budget.replay)
    expect(await outboxTypes(orderId)).toEqual(['order.placed'])
  })

  it(`when payment, reservation, shipment and delivery answer, then each costs at most ${budget.noCommand} statements and ${budget.perCommand} more per command it sends`, async () => {
    const orderId = await place()
    const costs = {
      paid: await apply(orderId, { kind: 'payment.processed', paymentId: 'pay-1' }),
      reserved: await apply(orderId, { kind: 'inventory.reserved', reservationId: randomUUID() }),
      shipped: await apply(orderId, { kind: 'shipment.created', shipmentId: 'shp-1' }),
      delivered: await apply(orderId, { kind: 'shipment.delivered', shipmentId: 'shp-1' }),
    }
    // reserved sends shipment.requested, delivered order.completed; paid and shipped send nothing
    const commands = { paid: 0, reserved: 1, shipped: 0, delivered: 1 }
    for (const [answer, statements] of Object.entries(costs)) {
      const allowed = budget.noCommand + budget.perCommand * commands[answer as keyof typeof commands]
      expect(statements.length, `${answer}:\n${statements.join('\n---\n')}`).toBeLessThanOrEqual(allowed)
    }
    expect(await outboxTypes(orderId)).toEqual(['order.placed', 'shipment.requested', 'order.completed'])
    const [row] = await order.sql`select status from orders where id = ${orderId}`
    expect(row?.status).toBe('delivered')
  })

  it(`when a paid order is read, then its answer with its items and its payment's link costs ${budget.read} statement`, async () => {
    const customerId = randomUUID()
    const orderId = await place(order, customerId)
    await apply(orderId, { kind: 'payment.processed', paymentId: 'pay-read' })
    let body: Record<string, unknown> = {}
    const statements = await statementsOf(async () => {
      const answer = await order.app.inject({
        method: 'GET',
        url: `/api/v1/orders/${orderId}`,
        headers: asUser(customerId),
      })
      expect(answer.statusCode).toBe(200)
      body = answer.json()
    })
    expect(statements.length, statements.join('\n---\n')).toBeLessThanOrEqual(budget.read)
    expect(body).toMatchObject({
      id: orderId,
      status: 'paid',
      total: 39.98,
      items: [{ productId: mug.id, quantity: 2, price: 19.99, name: 'Blue mug' }],
      _links: { payment: { href: '/api/v1/payments/pay-read', method: 'GET' } },
    })
  })

  it('when the stock is short after the charge, then the failure and its two commands cost the read, the write and an outbox statement each', async () => {
    const orderId = await place()
    await apply(orderId, { kind: 'payment.processed', paymentId: 'pay-2' })
    const statements = await apply(orderId, { kind: 'inventory.failed', reason: 'out of stock' })
    expect(statements.length, statements.join('\n---\n')).toBeLessThanOrEqual(
      budget.noCommand + 2 * budget.perCommand,
    )
    expect(await outboxTypes(orderId)).toEqual([
      'order.placed',
      'order.failed',
      'inventory.release_requested',
    ])
  })

  it(`when a paid order is cancelled, then the check costs ${budget.cancelCheck} statement, the saga's cancel the read, the write and one per command`, async () => {
    const customerId = randomUUID()
    const orderId = await place(order, customerId)
    await apply(orderId, { kind: 'payment.processed', paymentId: 'pay-cancel' })
    const statements = await statementsOf(async () => {
      const answer = await order.app.inject({
        method: 'POST',
        url: `/api/v1/orders/${orderId}/cancel`,
        headers: asUser(customerId),
      })
      expect(answer.statusCode).toBe(202)
    })
    // order.cancelled and inventory.release_requested
    expect(statements.length, statements.join('\n---\n')).toBeLessThanOrEqual(
      budget.cancelCheck + budget.noCommand + 2 * budget.perCommand,
    )
    expect(await outboxTypes(orderId)).toEqual([
      'order.placed',
      'order.cancelled',
      'inventory.release_requested',
    ])
  })

  it('when an event names an order without a saga here, then it costs the one read and writes nothing', async () => {
    const statements = await apply(randomUUID(), { kind: 'payment.processed', paymentId: 'pay-x' })
    expect(statements.length, statements.join('\n---\n')).toBe(1)
  })

  it(`when a step's deadline passes, then the round that asks it again costs ${budget.dueOrders} statement and, per instance, the read, the write and the request's outbox statement`, async () => {
    const orderId = await place(hurried)
    await eventually('the payment step is due', async () => {
      const due = await hurried.sql`
        select 1 from sagas where order_id = ${orderId} and deadline <= now()`
      return due.length > 0
    })
    let fired = 0
    const statements = await statementsOf(async () => {
      fired = await hurried.saga.fireDeadlines()
    })
    expect(fired).toBe(1)
    expect(statements.length, statements.join('\n---\n')).toBeLessThanOrEqual(
      budget.dueOrders + budget.noCommand + budget.perCommand,
    )
    expect(await outboxTypes(orderId, hurried)).toEqual(['order.placed', 'payment.requested'])
  })
})
