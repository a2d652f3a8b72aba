// The order saga's process manager on a real database (and, for its consumer, the real broker through the app's own
// backbone): every order starts
// an instance; payment's, inventory's and shipping's answers move it and the order's status, with the commands in
// the outbox in the same transaction; deadlines retry, fail and escalate; operators list, read, retry, compensate.
// Inventory is the stand-in of orders.test.ts (a small HTTP server in the real Consul); no engine is replaced.
import { randomUUID } from 'node:crypto'
import type { ProductSummary } from '@meridian/contracts'
import { transaction } from '@meridian/db'
import { createEvent, createEventProducer, type EventProducer } from '@meridian/events'
import {
  asAdmin,
  asUser,
  eventually,
  expectErrorEnvelope,
  freshEventTopics,
  type TestEventTopics,
  testKafka,
  tokenEnv,
  uniqueName,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SagaFact } from '../src/domain/saga-machine.ts'
import { buildOrderTestApp, type OrderTestApp } from './support/app.ts'
import { type InventoryStandIn, startInventoryStandIn } from './support/inventory-stand-in.ts'
import { placeTestOrder, testAddress } from './support/place.ts'

const mug: ProductSummary = { id: randomUUID(), name: 'Blue mug', price: 19.99, available: 10, active: true }

let inventory: InventoryStandIn
/** payment.processed of this file's own, which `order`'s consumer of it reads */
let paymentTopics: TestEventTopics
let order: OrderTestApp
/** an order app whose deadlines are short and fired by the tests themselves */
let hurried: OrderTestApp

beforeAll(async () => {
  inventory = await startInventoryStandIn([mug])
  // the topic exists before the app's consumer subscribes to it
  paymentTopics = await freshEventTopics('payment.processed')
  const env = { ...tokenEnv, INVENTORY_SERVICE_NAME: inventory.name }
  // the app's own backbone runs its payment.processed consumer alone, in a group of this file's own; the other
  // answers are applied by the tests themselves; no relay (the outbox is what the tests read)
  order = await buildOrderTestApp(env, {
    events: {
      kafka: testKafka(),
      relay: false,
      consumers: {
        group: uniqueName('order'),
        topics: { 'payment.processed': paymentTopics.topic },
        types: ['payment.processed'],
        retryDelaysMs: [200, 200, 200],
      },
    },
  })
  hurried = await buildOrderTestApp({
    ...env,
    SAGA_STEP_TIMEOUT_MS: '100',
    SAGA_STEP_ATTEMPTS: '2',
    SAGA_COMPENSATION_BACKOFF_MS: '100',
    SAGA_COMPENSATION_ATTEMPTS: '2',
    SAGA_SWEEP_INTERVAL_MS: '60000',
  })
})

afterAll(async () => {
  await hurried?.close()
  // the app first: its consumer leaves its group before its topics go
  await order?.close()
  await paymentTopics?.delete()
  await inventory?.close()
})

const address = testAddress

const place = (app: OrderTestApp = order, customerId = randomUUID()): Promise<string> =>
  placeTestOrder(app, mug.id, customerId)

/** The fact applied as the consumer applies it: in a transaction, with the event it came with. */
async function apply(app: OrderTestApp, orderId: string, fact: SagaFact): Promise<void> {
  await transaction(app.sql, (tx) =>
    app.saga.onEvent(orderId, fact, tx, { eventType: fact.kind, eventId: randomUUID() }),
  )
}

async function outboxOf(app: OrderTestApp, orderId: string) {
  return app.sql<{ eventType: string; payload: { data: Record<string, unknown> } }[]>`
    select event_type, payload from outbox where aggregate_id = ${orderId} order by id`
}

const statusOf = async (app: OrderTestApp, orderId: string) =>
  (await app.app.inject({ method: 'GET', url: `/api/v1/orders/${orderId}`, headers: asAdmin() })).json()
    .status

const sagaOf = async (app: OrderTestApp, orderId: string) =>
  (await app.app.inject({ method: 'GET', url: `/api/v1/admin/sagas/${orderId}`, headers: asAdmin() })).json()

describe('the saga of an order', () => {
  it('when an order is placed, then its saga is created, waiting for the payment, with a deadline and a step log', async () => {
    const orderId = await place()
    const saga = await sagaOf(order, orderId)
    expect(saga).toMatchObject({
      orderId,
      state: 'created',
      orderStatus: 'placed',
      step: 'payment',
      attempt: 1,
      compensation: 'none',
      deadline: expect.any(String),
      _links: {
        self: { href: `/api/v1/admin/sagas/${orderId}`, method: 'GET' },
        order: { href: `/api/v1/orders/${orderId}`, method: 'GET' },
      },
    })
    expect(saga.log).toEqual([
      expect.objectContaining({ step: 'payment', outcome: 'started', eventType: 'order.placed' }),
    ])
  })

  it('when payment, reservation, shipment and delivery answer, then the order is paid, reserved, shipped, delivered, and order.completed goes out', async () => {
    const orderId = await place()
    await apply(order, orderId, { kind: 'payment.processed', paymentId: 'pay-1' })
    expect(await statusOf(order, orderId)).toBe('paid')
    await apply(order, orderId, { kind: 'inventory.reserved', reservationId: randomUUID() })
    expect(await statusOf(order, orderId)).toBe('reserved')
    await apply(order, orderId, { kind: 'shipment.created', shipmentId: 'shp-1' })
    expect(await statusOf(order, orderId)).toBe('shipped')
    await apply(order, orderId, { kind: 'shipment.delivered', shipmentId: 'shp-1' })
    expect(await statusOf(order, orderId)).toBe('delivered')

    // the shipment step is asked for by the saga when the stock is reserved (shipping ships on request)
    expect((await outboxOf(order, orderId)).map((row) => row.eventType)).toEqual([
      'order.placed',
      'shipment.requested',
      'order.completed',
    ])
    expect((await outboxOf(order, orderId))[1]?.payload.data).toMatchObject({
      orderId,
      items: [{ productId: mug.id, quantity: 2 }],
      shippingAddress: address,
      attempt: 1,
    })
    const saga = await sagaOf(order, orderId)
    expect(saga).toMatchObject({ state: 'shipped', step: null, deadline: null, shipmentId: 'shp-1' })
    expect(saga.log.map((line: { step: string; outcome: string }) => `${line.step} ${line.outcome}`)).toEqual(
      [
        'payment started',
        'payment succeeded',
        'inventory started',
        'inventory succeeded',
        'shipment started',
        'shipment succeeded',
        'order succeeded',
      ],
    )
    // shipped: cancelling is a 409, and so is an operator's compensation
    const cancel = await order.app.inject({
      method: 'POST',
      url: `/api/v1/orders/${orderId}/cancel`,
      headers: asAdmin(),
    })
    expectErrorEnvelope(cancel, 409, 'CONFLICT')
  })

  it('when the payment is declined, then the order is payment_failed and nothing is asked of anyone', async () => {
    const orderId = await place()
    await apply(order, orderId, { kind: 'payment.failed', reason: 'card declined' })
    expect(await statusOf(order, orderId)).toBe('payment_failed')
    expect((await outboxOf(order, orderId)).map((row) => row.eventType)).toEqual(['order.placed'])
    expect(await sagaOf(order, orderId)).toMatchObject({
      state: 'failed',
      failedStep: 'payment',
      compensation: 'none',
    })
  })

  it('when the payment asks the customer to authenticate (3-D Secure), then the order is payment_action_required and links the provider page until it is paid', async () => {
    const customerId = randomUUID()
    const orderId = await place(order, customerId)
    const page = 'https://provider.example/3ds/pi_123'
    await apply(order, orderId, {
      kind: 'payment.action_required',
      authenticateUrl: page,
      expiresAt: new Date(Date.now() + 600_000).toISOString(),
    })
    expect(await statusOf(order, orderId)).toBe('payment_action_required')
    const read = async (url: string) =>
      (await order.app.inject({ method: 'GET', url, headers: asUser(customerId) })).json()
    const waiting = await read(`/api/v1/orders/${orderId}`)
    expect(waiting.status).toBe('payment_action_required')
    expect(waiting._links).toEqual({
      self: { href: `/api/v1/orders/${orderId}`, method: 'GET' },
      cancel: { href: `/api/v1/orders/${orderId}/cancel`, method: 'POST' },
      authenticate: { href: page, method: 'GET' },
    })
    const listed = await read(`/api/v1/users/${customerId}/orders?status=payment_action_required`)
    expect(listed.data.map((each: { id: string }) => each.id)).toEqual([orderId])
    expect(await sagaOf(order, orderId)).toMatchObject({ state: 'created', step: 'payment' })

    await apply(order, orderId, { kind: 'payment.processed', paymentId: randomUUID() })
    const paid = await read(`/api/v1/orders/${orderId}`)
    expect(paid.status).toBe('paid')
    expect(paid._links.authenticate).toBeUndefined()
  })

  it('when stock is short after the charge, then the order fails and the compensations run in reverse order: release, then refund', async () => {
    const orderId = await place()
    await apply(order, orderId, { kind: 'payment.processed', paymentId: 'pay-2' })
    await apply(order, orderId, { kind: 'inventory.failed', reason: 'out of stock' })
    expect(await statusOf(order, orderId)).toBe('failed')
    let outbox = await outboxOf(order, orderId)
    expect(outbox.map((row) => row.eventType)).toEqual([
      'order.placed',
      'order.failed',
      'inventory.release_requested',
    ])
    expect(outbox[1]?.payload.data).toEqual({ orderId, reason: 'out of stock', failedStep: 'inventory' })

    await apply(order, orderId, { kind: 'inventory.released' })
    outbox = await outboxOf(order, orderId)
    expect(outbox.at(-1)?.eventType).toBe('payment.refund_requested')
    expect(outbox.at(-1)?.payload.data).toEqual({ orderId, reason: 'out of stock', attempt: 1 })

    await apply(order, orderId, { kind: 'payment.refunded', paymentId: 'pay-2', amount: 39.98 })
    expect(await sagaOf(order, orderId)).toMatchObject({ state: 'failed', compensation: 'done', step: null })
    expect(await statusOf(order, orderId)).toBe('failed')
  })

  it('when the customer cancels, then the order is cancelling until the release and the refund answered, then cancelled', async () => {
    const customerId = randomUUID()
    const orderId = await place(order, customerId)
    await apply(order, orderId, { kind: 'payment.processed', paymentId: 'pay-3' })
    const cancel = await order.app.inject({
      method: 'POST',
      url: `/api/v1/orders/${orderId}/cancel`,
      headers: asUser(customerId),
    })
    expect(cancel.statusCode).toBe(202)
    expect(await statusOf(order, orderId)).toBe('cancelling')
    await apply(order, orderId, { kind: 'inventory.released' })
    expect(await statusOf(order, orderId)).toBe('cancelling')
    await apply(order, orderId, { kind: 'payment.refunded', paymentId: 'pay-3', amount: 39.98 })
    expect(await statusOf(order, orderId)).toBe('cancelled')
    expect((await outboxOf(order, orderId)).map((row) => row.eventType)).toEqual([
      'order.placed',
      'order.cancelled',
      'inventory.release_requested',
      'payment.refund_requested',
    ])
  })

  it('when an order whose payment failed is paid (POST /payments answered payment.processed), then the saga goes on to paid, reserved and shipped', async () => {
    const orderId = await place()
    await apply(order, orderId, { kind: 'payment.failed', reason: 'no payment method' })
    expect(await statusOf(order, orderId)).toBe('payment_failed')
    const paymentId = randomUUID()
    await apply(order, orderId, { kind: 'payment.processed', paymentId })
    expect(await statusOf(order, orderId)).toBe('paid')
    expect(await sagaOf(order, orderId)).toMatchObject({
      state: 'payment_processed',
      step: 'inventory',
      deadline: expect.any(String),
      failedStep: null,
      paymentId,
    })
    await apply(order, orderId, { kind: 'inventory.reserved', reservationId: randomUUID() })
    await apply(order, orderId, { kind: 'shipment.created', shipmentId: randomUUID() })
    expect(await statusOf(order, orderId)).toBe('shipped')
    // nothing was undone: no refund nor release was ever asked
    expect((await outboxOf(order, orderId)).map((row) => row.eventType)).toEqual([
      'order.placed',
      'shipment.requested',
    ])
  })

  it('when an event names an order that has no saga here, then nothing happens', async () => {
    const orderId = randomUUID()
    await apply(order, orderId, { kind: 'payment.processed', paymentId: 'pay-x' })
    expect(await order.sql`select 1 from sagas where order_id = ${orderId}`).toHaveLength(0)
  })
})

describe('cancelling and the shipment step', () => {
  const cancel = (orderId: string, customerId: string) =>
    order.app.inject({
      method: 'POST',
      url: `/api/v1/orders/${orderId}/cancel`,
      headers: asUser(customerId),
    })
  const eventTypes = async (orderId: string) => (await outboxOf(order, orderId)).map((row) => row.eventType)

  it('when the stock is reserved (the shipment step has begun), then a cancel is 409 CONFLICT, nothing is undone, and the cancel link is gone', async () => {
    const customerId = randomUUID()
    const orderId = await place(order, customerId)
    await apply(order, orderId, { kind: 'payment.processed', paymentId: randomUUID() })
    const paid = await order.app.inject({
      method: 'GET',
      url: `/api/v1/orders/${orderId}`,
      headers: asUser(customerId),
    })
    expect(paid.json()._links.cancel).toEqual({ href: `/api/v1/orders/${orderId}/cancel`, method: 'POST' })

    await apply(order, orderId, { kind: 'inventory.reserved', reservationId: randomUUID() })
    const refused = expectErrorEnvelope(await cancel(orderId, customerId), 409, 'CONFLICT')
    expect(refused.message).toContain('reserved')
    expect(await eventTypes(orderId)).toEqual(['order.placed', 'shipment.requested'])
    const read = await order.app.inject({
      method: 'GET',
      url: `/api/v1/orders/${orderId}`,
      headers: asUser(customerId),
    })
    expect(read.json()).toMatchObject({ status: 'reserved' })
    expect(read.json()._links.cancel).toBeUndefined()
    expect(await sagaOf(order, orderId)).toMatchObject({ state: 'inventory_reserved', compensation: 'none' })
  })

  it('when the reservation holds the order and a cancel comes meanwhile, then the cancel waits for it and is refused: never both the shipment request and a compensation', async () => {
    const customerId = randomUUID()
    const orderId = await place(order, customerId)
    await apply(order, orderId, { kind: 'payment.processed', paymentId: randomUUID() })
    let cancelled: ReturnType<typeof cancel> | undefined
    await transaction(order.sql, async (tx) => {
      await order.saga.onEvent(orderId, { kind: 'inventory.reserved', reservationId: randomUUID() }, tx, {
        eventType: 'inventory.reserved',
        eventId: randomUUID(),
      })
      cancelled = cancel(orderId, customerId)
      // the cancel is waiting for the order's row, which this transaction holds
      await eventually('the cancel waits for the order row', async () => {
        const [row] = await order.sql<{ waiting: number }[]>`
          select count(*)::int as waiting from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`
        return (row?.waiting ?? 0) > 0
      })
    })
    if (!cancelled) throw new Error('no cancel was sent')
    expectErrorEnvelope(await cancelled, 409, 'CONFLICT')
    expect(await eventTypes(orderId)).toEqual(['order.placed', 'shipment.requested'])
  })

  it('when cancels and reservations race on many orders, then each order either is cancelled without a shipment request or ships without a compensation', async () => {
    const customerId = randomUUID()
    const orderIds = await Promise.all(Array.from({ length: 12 }, () => place(order, customerId)))
    for (const orderId of orderIds) {
      await apply(order, orderId, { kind: 'payment.processed', paymentId: randomUUID() })
    }
    const outcomes = await Promise.all(
      orderIds.map(async (orderId) => {
        const [answer] = await Promise.all([
          cancel(orderId, customerId),
          apply(order, orderId, { kind: 'inventory.reserved', reservationId: randomUUID() }),
        ])
        return { orderId, status: answer.statusCode }
      }),
    )
    for (const { orderId, status } of outcomes) {
      const types = await eventTypes(orderId)
      const saga = await sagaOf(order, orderId)
      if (status === 202) {
        expect(types, orderId).not.toContain('shipment.requested')
        expect(types, orderId).toContain('order.cancelled')
        expect(saga.state).toBe('cancelled')
      } else {
        expect(status, orderId).toBe(409)
        expect(types, orderId).toEqual(['order.placed', 'shipment.requested'])
        expect(saga.state).toBe('inventory_reserved')
      }
    }
  })
})

describe('the links of a paid and shipped order', () => {
  it('when payment.processed and shipment.created named their ids, then GET /orders/{id} and the user-scoped routes link the payment and the shipment', async () => {
    const customerId = randomUUID()
    const orderId = await place(order, customerId)
    const read = async (url: string) =>
      (await order.app.inject({ method: 'GET', url, headers: asUser(customerId) })).json()
    expect((await read(`/api/v1/orders/${orderId}`))._links).toEqual({
      self: { href: `/api/v1/orders/${orderId}`, method: 'GET' },
      cancel: { href: `/api/v1/orders/${orderId}/cancel`, method: 'POST' },
    })

    const paymentId = randomUUID()
    await apply(order, orderId, { kind: 'payment.processed', paymentId })
    const payment = { href: `/api/v1/payments/${paymentId}`, method: 'GET' }
    expect((await read(`/api/v1/orders/${orderId}`))._links).toEqual({
      self: { href: `/api/v1/orders/${orderId}`, method: 'GET' },
      cancel: { href: `/api/v1/orders/${orderId}/cancel`, method: 'POST' },
      payment,
    })

    const shipmentId = randomUUID()
    await apply(order, orderId, { kind: 'inventory.reserved', reservationId: randomUUID() })
    await apply(order, orderId, { kind: 'shipment.created', shipmentId })
    const links = {
      self: { href: `/api/v1/orders/${orderId}`, method: 'GET' },
      payment,
      shipment: { href: `/api/v1/shipments/${shipmentId}`, method: 'GET' },
      // issue 32: a shipped order can be returned
      returns: { href: `/api/v1/orders/${orderId}/returns`, method: 'POST' },
      exchanges: { href: `/api/v1/orders/${orderId}/exchanges`, method: 'POST' },
    }
    for (const url of [
      `/api/v1/orders/${orderId}`,
      `/orders/${orderId}`,
      `/api/v1/users/${customerId}/orders/${orderId}`,
    ]) {
      expect((await read(url))._links, url).toEqual(links)
    }
    const list = await read(`/api/v1/users/${customerId}/orders?status=shipped`)
    expect(list.data.find((each: { id: string }) => each.id === orderId)?._links).toEqual(links)
  })
})

describe('the consumers on the broker', () => {
  let producer: EventProducer

  beforeAll(async () => {
    producer = await createEventProducer(testKafka())
  })
  afterAll(async () => {
    await producer?.disconnect()
  })

  const paid = (orderId: string, paymentId: string) =>
    createEvent(
      'payment.processed',
      {
        orderId,
        customerId: randomUUID(),
        total: 39.98,
        items: [{ productId: mug.id, quantity: 2, price: 19.99 }],
        paymentId,
      },
      { source: 'payment' },
    )

  it('when payment.processed is published, then the order is paid; the same event again changes nothing', async () => {
    const orderId = await place()
    const event = paid(orderId, 'pay-kafka')
    const message = {
      topic: paymentTopics.topic,
      key: orderId,
      value: JSON.stringify(event),
      headers: { 'message-id': event.id },
    }
    await producer.publish([message])
    await eventually('the order is paid', async () => (await statusOf(order, orderId)) === 'paid')
    await apply(order, orderId, { kind: 'inventory.reserved', reservationId: randomUUID() })
    // a redelivery of payment.processed after the reservation, then a marker order's payment behind it on the same
    // key (same partition, handled in order): once the marker is paid, the redelivery was handled
    const marker = await place()
    const markerEvent = paid(marker, 'pay-kafka-marker')
    await producer.publish([
      message,
      { ...message, value: JSON.stringify(markerEvent), headers: { 'message-id': markerEvent.id } },
    ])
    await eventually('the marker order is paid', async () => (await statusOf(order, marker)) === 'paid')
    // it left the order reserved, logged once
    expect(await statusOf(order, orderId)).toBe('reserved')
    const saga = await sagaOf(order, orderId)
    // the event's lines (the payment succeeded, the inventory step started) were written once
    const lines = saga.log.filter((line: { eventId?: string }) => line.eventId === event.id)
    expect(lines.map((line: { step: string; outcome: string }) => `${line.step} ${line.outcome}`)).toEqual([
      'payment succeeded',
      'inventory started',
    ])
  })
})

describe('deadlines', () => {
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  const fire = () => hurried.saga.fireDeadlines()

  it('when the payment does not answer, then payment.requested goes out with the order and the next attempt; after the last, the saga fails and compensates', async () => {
    const orderId = await place(hurried)
    await wait(150)
    expect(await fire()).toBeGreaterThanOrEqual(1)
    let outbox = await outboxOf(hurried, orderId)
    expect(outbox.map((row) => row.eventType)).toEqual(['order.placed', 'payment.requested'])
    expect(outbox[1]?.payload.data).toMatchObject({
      orderId,
      total: 39.98,
      attempt: 2,
      payment: { token: 'tok_test_visa' },
      shippingAddress: address,
    })

    await wait(150)
    await fire()
    expect(await statusOf(hurried, orderId)).toBe('failed')
    outbox = await outboxOf(hurried, orderId)
    expect(outbox.map((row) => row.eventType).slice(2)).toEqual([
      'order.failed',
      'inventory.release_requested',
    ])
    expect(outbox[2]?.payload.data).toEqual({
      orderId,
      reason: 'no answer from the payment step after 2 attempts',
      failedStep: 'payment',
    })
  })

  it('when a compensation never answers, then it is asked again and then escalated: logged, counted, listed for operators, and an operator retry asks again', async () => {
    const orderId = await place(hurried)
    await apply(hurried, orderId, { kind: 'inventory.failed', reason: 'out of stock' })
    await wait(150)
    await fire()
    await wait(250)
    await fire()
    const saga = await sagaOf(hurried, orderId)
    expect(saga).toMatchObject({ compensation: 'escalated', step: 'release', deadline: null })
    expect(saga.log.at(-1)).toMatchObject({ step: 'release', outcome: 'escalated', attempt: 2 })

    const listed = await hurried.app.inject({
      method: 'GET',
      url: '/api/v1/admin/sagas?compensation=escalated',
      headers: asAdmin(),
    })
    expect(listed.statusCode).toBe(200)
    expect(listed.json().data.map((each: { orderId: string }) => each.orderId)).toContain(orderId)

    const metrics = await hurried.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { accept: 'text/plain' },
    })
    expect(metrics.body).toMatch(/meridian_saga_escalations_total\{[^}]*step="release"[^}]*\} [1-9]/)

    const retried = await hurried.app.inject({
      method: 'POST',
      url: `/api/v1/admin/sagas/${orderId}/retry`,
      headers: asAdmin(),
    })
    expect(retried.statusCode).toBe(202)
    expect(retried.json()).toMatchObject({ compensation: 'running', step: 'release', attempt: 1 })
    const releases = (await outboxOf(hurried, orderId)).filter(
      (row) => row.eventType === 'inventory.release_requested',
    )
    expect(releases.map((row) => row.payload.data.attempt)).toEqual([1, 2, 1])
  })
})

describe('GET and POST /api/v1/admin/sagas', () => {
  it('when an admin lists by state, then only instances in that state, in the list envelope', async () => {
    const declined = await place()
    await apply(order, declined, { kind: 'payment.failed', reason: 'card declined' })
    const answer = await order.app.inject({
      method: 'GET',
      url: '/api/v1/admin/sagas?state=failed&limit=100',
      headers: asAdmin(),
    })
    expect(answer.statusCode).toBe(200)
    const body = answer.json()
    expect(body.data.length).toBeGreaterThan(0)
    expect(body.data.every((saga: { state: string }) => saga.state === 'failed')).toBe(true)
    expect(body.data.map((saga: { orderId: string }) => saga.orderId)).toContain(declined)
    expect(body.meta).toMatchObject({ page: 1, limit: 100 })
    // the /api alias answers the same
    const alias = await order.app.inject({
      method: 'GET',
      url: '/api/admin/sagas?state=failed',
      headers: asAdmin(),
    })
    expect(alias.statusCode).toBe(200)
  })

  it('when an operator compensates a running saga, then 202 and it fails with their reason; compensating again while it runs is 409', async () => {
    const orderId = await place()
    await apply(order, orderId, { kind: 'payment.processed', paymentId: 'pay-op' })
    const answer = await order.app.inject({
      method: 'POST',
      url: `/api/v1/admin/sagas/${orderId}/compensate`,
      payload: { reason: 'suspected fraud' },
      headers: asAdmin(),
    })
    expect(answer.statusCode).toBe(202)
    expect(answer.json()).toMatchObject({
      state: 'failed',
      failureReason: 'suspected fraud',
      compensation: 'running',
    })
    expect(await statusOf(order, orderId)).toBe('failed')
    const again = await order.app.inject({
      method: 'POST',
      url: `/api/v1/admin/sagas/${orderId}/compensate`,
      payload: {},
      headers: asAdmin(),
    })
    expectErrorEnvelope(again, 409, 'CONFLICT')
  })

  it('when nothing is awaited, then retry is 409; an unknown order is 404; a user is 403; no credentials 401; a bad id 400/422', async () => {
    const orderId = await place()
    await apply(order, orderId, { kind: 'payment.failed', reason: 'card declined' })
    const retry = (id: string, headers: Record<string, string>) =>
      order.app.inject({ method: 'POST', url: `/api/v1/admin/sagas/${id}/retry`, headers })
    expectErrorEnvelope(await retry(orderId, asAdmin()), 409, 'CONFLICT')
    expectErrorEnvelope(await retry(randomUUID(), asAdmin()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await retry(orderId, asUser(randomUUID())), 403, 'FORBIDDEN')
    expectErrorEnvelope(await retry(orderId, {}), 401, 'UNAUTHORIZED')
    const badId = await order.app.inject({
      method: 'GET',
      url: '/api/v1/admin/sagas/not-a-uuid',
      headers: asAdmin(),
    })
    expect([400, 422]).toContain(badId.statusCode)
    const list = await order.app.inject({
      method: 'GET',
      url: '/api/v1/admin/sagas',
      headers: asUser(randomUUID()),
    })
    expectErrorEnvelope(list, 403, 'FORBIDDEN')
    const badState = await order.app.inject({
      method: 'GET',
      url: '/api/v1/admin/sagas?state=lost',
      headers: asAdmin(),
    })
    expect([400, 422]).toContain(badState.statusCode)
  })
})
