// Payment's consumers: order.placed charges the order at the provider (simulator) and appends payment.processed or
// payment.failed; the saga's commands payment.requested (charge again: answered, charged once) and
// payment.refund_requested (refund: always answered, and a later charge of the order is refused). Through the real
// broker on topics of this file's own (the app's own backbone, in a group of this file's own), then each handler as
// the runner calls it.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import { createEvent, createEventProducer, type EventProducer } from '@meridian/events'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { eventually, freshEventTopics, type TestEventTopics, testKafka, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PaymentConsumersOptions, paymentConsumers } from '../src/events/consumers.ts'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { cards, orderSummary, providerToken } from './support/provider.ts'

let provider: PaymentSimulator
let payment: PaymentTestApp
let topics: TestEventTopics
let requestedTopics: TestEventTopics
let refundTopics: TestEventTopics
let producer: EventProducer
/** the group and topics of this file's own that the app's consumers run on */
let consumerOptions: PaymentConsumersOptions

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0, delayMs: 1500 })
  // the topics exist before the app's consumers subscribe to them
  ;[topics, requestedTopics, refundTopics] = await Promise.all([
    freshEventTopics('order.placed'),
    freshEventTopics('payment.requested'),
    freshEventTopics('payment.refund_requested'),
  ])
  // one group for the three, as the service runs them (one Kafka consumer in that group reads the three topics);
  // no relay (the outbox is what the tests read)
  consumerOptions = {
    group: uniqueName('payment'),
    topics: {
      'order.placed': topics.topic,
      'payment.requested': requestedTopics.topic,
      'payment.refund_requested': refundTopics.topic,
    },
    types: ['order.placed', 'payment.requested', 'payment.refund_requested'],
    retryDelaysMs: [200, 200, 200],
  }
  payment = await buildPaymentTestApp(
    { STRIPE_API_BASE: provider.url },
    { events: { kafka: testKafka(), relay: false, consumers: consumerOptions } },
  )
  producer = await createEventProducer(testKafka())
})

afterAll(async () => {
  await producer?.disconnect()
  // the app first: its consumers leave their groups before their topics go
  await payment?.close()
  await Promise.all([topics, requestedTopics, refundTopics].map((each) => each?.delete()))
  await provider?.close()
})

interface OutboxRow {
  eventType: string
  payload: { type: string; source: string; data: Record<string, unknown> }
}

const outboxOf = (orderId: string) =>
  payment.sql<OutboxRow[]>`select event_type, payload from outbox where aggregate_id = ${orderId} order by id`

/** order.placed data as the order service sends it, with the payment token of the `payment` extension. */
const placed = (token: string | undefined, orderId: string = randomUUID()) => ({
  orderId,
  customerId: randomUUID(),
  total: 39.98,
  items: [{ productId: randomUUID(), quantity: 2, price: 19.99 }],
  customerEmail: 'buyer@example.com',
  ...(token === undefined ? {} : { payment: { token } }),
})

describe('the order.placed consumer on the broker', () => {
  it('when order.placed is published, then the order is charged and payment.processed is in the outbox; a redelivery charges once', async () => {
    const data = placed(await providerToken(provider.url, cards.succeeds))
    const event = createEvent('order.placed', data, { source: 'order' })
    const message = {
      topic: topics.topic,
      key: data.orderId,
      value: JSON.stringify(event),
      headers: { 'message-id': event.id },
    }
    await producer.publish([message])
    await eventually('payment.processed is in the outbox', async () =>
      (await outboxOf(data.orderId)).some((row) => row.eventType === 'payment.processed'),
    )
    const [processed] = await outboxOf(data.orderId)
    const { payment: _token, ...orderData } = data
    expect(processed?.payload).toMatchObject({ type: 'payment.processed', source: 'payment' })
    expect(processed?.payload.data).toEqual({ ...orderData, paymentId: expect.any(String) })
    const [row] =
      await payment.sql`select id, status, amount_cents::int from payments where order_id = ${data.orderId}`
    expect(row).toEqual({ id: processed?.payload.data.paymentId, status: 'succeeded', amountCents: 3998 })

    // the same message again (a redelivery), then a marker order behind it on the same key (same partition)
    const marker = placed(await providerToken(provider.url, cards.succeeds))
    await producer.publish([
      message,
      { ...message, value: JSON.stringify(createEvent('order.placed', marker, { source: 'order' })) },
    ])
    await eventually('the marker order is processed', async () => (await outboxOf(marker.orderId)).length > 0)
    expect((await outboxOf(data.orderId)).map((each) => each.eventType)).toEqual(['payment.processed'])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, charged: 3998 })
  })
})

describe("the saga's commands on the broker", () => {
  it('when payment.requested and then payment.refund_requested are published, then the order is charged, answered, refunded and answered', async () => {
    const consumers = payment.consumers.filter((each) => each.type !== 'order.placed')
    expect(consumers.map(({ type, topic }) => ({ type, topic }))).toEqual([
      { type: 'payment.requested', topic: requestedTopics.topic },
      { type: 'payment.refund_requested', topic: refundTopics.topic },
    ])
    const data = placed(await providerToken(provider.url, cards.succeeds))
    const publish = async (
      topic: string,
      type: 'payment.requested' | 'payment.refund_requested',
      body: object,
    ) => {
      const event = createEvent(type, body as never, { source: 'order' })
      await producer.publish([
        { topic, key: data.orderId, value: JSON.stringify(event), headers: { 'message-id': event.id } },
      ])
    }

    await publish(requestedTopics.topic, 'payment.requested', { ...data, attempt: 2 })
    await eventually('payment.processed is in the outbox', async () =>
      (await outboxOf(data.orderId)).some((row) => row.eventType === 'payment.processed'),
    )
    await publish(refundTopics.topic, 'payment.refund_requested', {
      orderId: data.orderId,
      reason: 'out of stock',
      attempt: 1,
    })
    await eventually('payment.refunded is in the outbox', async () =>
      (await outboxOf(data.orderId)).some((row) => row.eventType === 'payment.refunded'),
    )
    const [processed, refunded] = await outboxOf(data.orderId)
    const { payment: _token, ...orderData } = data
    expect(processed?.payload.data).toEqual({ ...orderData, paymentId: expect.any(String) })
    expect(refunded?.payload.data).toEqual({
      orderId: data.orderId,
      paymentId: processed?.payload.data.paymentId,
      amount: 39.98,
      reason: 'out of stock',
    })
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 1 })
  })
})

describe("a return's refund on the broker", () => {
  it('when a 1.1.0 payment.refund_requested (a return named by cause and returnId, from an order release before 0.2) is published twice (the same event, then the next attempt), then its amount is refunded once and payment.refunded names the return each time, as that release reads it', async () => {
    const data = placed(await providerToken(provider.url, cards.succeeds))
    const charged = createEvent('order.placed', data, { source: 'order' })
    await producer.publish([
      {
        topic: topics.topic,
        key: data.orderId,
        value: JSON.stringify(charged),
        headers: { 'message-id': charged.id },
      },
    ])
    await eventually('payment.processed is in the outbox', async () =>
      (await outboxOf(data.orderId)).some((row) => row.eventType === 'payment.processed'),
    )
    const returnId = randomUUID()
    const ask = (attempt: number) =>
      createEvent(
        'payment.refund_requested',
        { orderId: data.orderId, reason: 'wrong size', attempt, cause: 'return', returnId, amount: 19.99 },
        { source: 'order' },
      )
    const first = ask(1)
    const message = (event: ReturnType<typeof ask>) => ({
      topic: refundTopics.topic,
      key: data.orderId,
      value: JSON.stringify(event),
      headers: { 'message-id': event.id },
    })
    // the same event twice (a redelivery: the inbox keeps it to once), the process's next attempt, then a marker
    // behind them on the same key (same partition): a compensation of an order never charged
    const marker = randomUUID()
    const markerEvent = createEvent(
      'payment.refund_requested',
      { orderId: marker, reason: 'marker', attempt: 1 },
      { source: 'order' },
    )
    await producer.publish([
      message(first),
      message(first),
      message(ask(2)),
      { ...message(first), value: JSON.stringify(markerEvent), headers: { 'message-id': markerEvent.id } },
    ])
    await eventually('the marker is answered', async () => (await outboxOf(marker)).length > 0)
    const rows = await outboxOf(data.orderId)
    expect(rows.map((row) => row.eventType)).toEqual([
      'payment.processed',
      'payment.refunded',
      'payment.refunded',
    ])
    const paymentId = rows[0]?.payload.data.paymentId
    for (const row of rows.slice(1))
      expect(row.payload.data).toEqual({
        orderId: data.orderId,
        paymentId,
        amount: 19.99,
        reason: 'wrong size',
        cause: 'return',
        returnId,
      })
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({
      charges: 1,
      refunds: 1,
      refunded: 1999,
    })
  })
})

describe('the consumers main.ts starts', () => {
  const context = { topic: 't', partition: 0, offset: '0', attempt: 1 }
  async function handle(type: string, data: Record<string, unknown>): Promise<void> {
    const each = payment.consumers.find((candidate) => candidate.type === type)
    if (!each) throw new Error(`no consumer of ${type}`)
    const event = createEvent(each.type, data as never, { source: 'test' })
    await transaction(payment.sql, (tx) =>
      (each.handler as (...args: unknown[]) => Promise<void>)(event, tx, context),
    )
  }
  const requestRefund = (orderId: string, reason = 'out of stock', attempt = 1) =>
    handle('payment.refund_requested', { orderId, reason, attempt })
  const eventsOf = async (orderId: string) => (await outboxOf(orderId)).map((row) => row.eventType)
  const dataOf = async (orderId: string) => (await outboxOf(orderId)).map((row) => row.payload.data)

  it('when listed, then one per event type payment reacts to, all in the payment group (no order.cancelled nor order.failed); buildApp declares the same with the group and topics it was asked for', () => {
    const listed = ({ type, group, topic }: (typeof payment.consumers)[number]) => ({ type, group, topic })
    expect(paymentConsumers(payment.payments).map(listed)).toEqual([
      { type: 'order.placed', group: 'payment', topic: undefined },
      { type: 'payment.requested', group: 'payment', topic: undefined },
      { type: 'payment.refund_requested', group: 'payment', topic: undefined },
    ])
    expect(payment.consumers.map(listed)).toEqual(
      paymentConsumers(payment.payments, consumerOptions).map(listed),
    )
  })

  it('when the card is declined, then payment.failed with the reason and a failed payment; no charge', async () => {
    const data = placed(await providerToken(provider.url, cards.declined))
    await handle('order.placed', data)
    const rows = await outboxOf(data.orderId)
    expect(rows.map((row) => row.eventType)).toEqual(['payment.failed'])
    expect(rows[0]?.payload.data).toEqual({ orderId: data.orderId, reason: 'Your card was declined.' })
    const [row] = await payment.sql`select status from payments where order_id = ${data.orderId}`
    expect(row).toEqual({ status: 'failed' })
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 0, failedCharges: 1 })
  })

  it("when order.placed carries no payment method, then payment.failed 'no payment method' and no provider call", async () => {
    const data = placed(undefined)
    await handle('order.placed', data)
    expect(await dataOf(data.orderId)).toEqual([{ orderId: data.orderId, reason: 'no payment method' }])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 0, failedCharges: 0 })
  })

  it('when the provider fails, then the handler throws (the runner retries) and nothing is written', async () => {
    const data = placed(await providerToken(provider.url, cards.providerError))
    await expect(handle('order.placed', data)).rejects.toMatchObject({ statusCode: 502 })
    expect(await outboxOf(data.orderId)).toEqual([])
    const [counted] = await payment.sql<
      { count: number }[]
    >`select count(*)::int from payments where order_id = ${data.orderId}`
    expect(counted?.count).toBe(0)
  })

  it('when the same order is placed again under a new event id, then it is charged once and payment.processed answers again with the same paymentId', async () => {
    const data = placed(await providerToken(provider.url, cards.succeeds))
    await handle('order.placed', data)
    await handle('order.placed', data)
    expect(await eventsOf(data.orderId)).toEqual(['payment.processed', 'payment.processed'])
    const [first, second] = await dataOf(data.orderId)
    expect(second).toEqual(first)
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1 })
  })

  describe('payment.requested', () => {
    it('when the order was never charged (order.placed lost), then it is charged and payment.processed carries the order data without attempt', async () => {
      const data = placed(await providerToken(provider.url, cards.succeeds))
      await handle('payment.requested', { ...data, attempt: 2 })
      const rows = await outboxOf(data.orderId)
      expect(rows.map((row) => row.payload)).toEqual([
        expect.objectContaining({ type: 'payment.processed', source: 'payment' }),
      ])
      const { payment: _token, ...orderData } = data
      expect(rows[0]?.payload.data).toEqual({ ...orderData, paymentId: expect.any(String) })
      const [row] = await payment.sql`
        select id, status, amount_cents::int from payments where order_id = ${data.orderId}`
      expect(row).toEqual({ id: rows[0]?.payload.data.paymentId, status: 'succeeded', amountCents: 3998 })
      expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, charged: 3998 })
    })

    it('when the order was charged already, then each request answers payment.processed with the same paymentId; charged once', async () => {
      const data = placed(await providerToken(provider.url, cards.succeeds))
      await handle('order.placed', data)
      await handle('payment.requested', { ...data, attempt: 2 })
      await handle('payment.requested', { ...data, attempt: 3 })
      expect(await eventsOf(data.orderId)).toEqual([
        'payment.processed',
        'payment.processed',
        'payment.processed',
      ])
      const paymentIds = (await dataOf(data.orderId)).map((each) => each.paymentId)
      expect(new Set(paymentIds).size).toBe(1)
      expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, failedCharges: 0 })
      const [counted] = await payment.sql<{ count: number }[]>`
        select count(*)::int from payments where order_id = ${data.orderId}`
      expect(counted?.count).toBe(1)
    })

    it('when the order was declined, then payment.failed answers again with the stored reason; the provider is not asked again', async () => {
      const data = placed(await providerToken(provider.url, cards.declined))
      await handle('order.placed', data)
      await handle('payment.requested', { ...data, attempt: 2 })
      expect(await dataOf(data.orderId)).toEqual([
        { orderId: data.orderId, reason: 'Your card was declined.' },
        { orderId: data.orderId, reason: 'Your card was declined.' },
      ])
      expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 0, failedCharges: 1 })
    })
  })

  describe('payment.refund_requested', () => {
    it('when a charged order is refunded, then it is refunded at the provider and payment.refunded names the payment; again, payment.refunded with amount 0 and no paymentId, refunded once', async () => {
      const data = placed(await providerToken(provider.url, cards.succeeds))
      await handle('order.placed', data)
      const paymentId = (await dataOf(data.orderId))[0]?.paymentId

      await requestRefund(data.orderId, 'customer cancelled')
      expect((await outboxOf(data.orderId)).at(-1)?.payload).toMatchObject({
        type: 'payment.refunded',
        source: 'payment',
        data: {
          orderId: data.orderId,
          paymentId,
          amount: 39.98,
          reason: 'customer cancelled',
        },
      })
      expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ refunds: 1, refunded: 3998 })
      const [row] = await payment.sql`
        select status, refunded_cents::int from payments where order_id = ${data.orderId}`
      expect(row).toEqual({ status: 'refunded', refundedCents: 3998 })

      // the saga asks again (its answer timed out): answered, nothing refunded twice
      await requestRefund(data.orderId, 'customer cancelled', 2)
      expect(await eventsOf(data.orderId)).toEqual([
        'payment.processed',
        'payment.refunded',
        'payment.refunded',
      ])
      expect((await dataOf(data.orderId)).at(-1)).toEqual({
        orderId: data.orderId,
        amount: 0,
        reason: 'customer cancelled',
      })
      expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ refunds: 1, refunded: 3998 })
    })

    it('when the order was never charged (or declined), then payment.refunded with amount 0 and no paymentId', async () => {
      const never = randomUUID()
      await requestRefund(never, 'out of stock')
      expect(await outboxOf(never)).toEqual([
        expect.objectContaining({
          eventType: 'payment.refunded',
          payload: expect.objectContaining({
            data: { orderId: never, amount: 0, reason: 'out of stock' },
          }),
        }),
      ])

      const declined = placed(await providerToken(provider.url, cards.declined))
      await handle('order.placed', declined)
      await requestRefund(declined.orderId, 'payment failed')
      expect((await dataOf(declined.orderId)).at(-1)).toEqual({
        orderId: declined.orderId,
        amount: 0,
        reason: 'payment failed',
      })
      expect(await orderSummary(provider.url, declined.orderId)).toMatchObject({ refunds: 0 })
    })

    it("when the refund was requested before order.placed or payment.requested arrives, then no charge: payment.failed 'the order was cancelled'", async () => {
      const data = placed(await providerToken(provider.url, cards.succeeds))
      await requestRefund(data.orderId, 'customer cancelled')
      await handle('order.placed', data)
      await handle('payment.requested', { ...data, attempt: 2 })
      expect(await dataOf(data.orderId)).toEqual([
        { orderId: data.orderId, amount: 0, reason: 'customer cancelled' },
        { orderId: data.orderId, reason: 'the order was cancelled' },
        { orderId: data.orderId, reason: 'the order was cancelled' },
      ])
      expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 0, failedCharges: 0 })
      const [counted] = await payment.sql<{ count: number }[]>`
        select count(*)::int from payments where order_id = ${data.orderId}`
      expect(counted?.count).toBe(0)
    })

    it("when payment.requested arrives after the order was refunded, then payment.failed 'the order was cancelled'; charged and refunded once", async () => {
      const data = placed(await providerToken(provider.url, cards.succeeds))
      await handle('order.placed', data)
      await requestRefund(data.orderId)
      await handle('payment.requested', { ...data, attempt: 2 })
      expect(await eventsOf(data.orderId)).toEqual([
        'payment.processed',
        'payment.refunded',
        'payment.failed',
      ])
      expect((await dataOf(data.orderId)).at(-1)).toEqual({
        orderId: data.orderId,
        reason: 'the order was cancelled',
      })
      expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 1 })
    })

    it('when the refund is requested while the charge is at the provider, then it waits for the charge and refunds it', async () => {
      const data = placed(await providerToken(provider.url, cards.delayed))
      const charging = handle('order.placed', data)
      // the charge holds the order's advisory lock while the provider takes its time
      await eventually('the charge holds the order lock', async () => {
        const [held] = await payment.sql<{ held: boolean }[]>`
          select exists (
            select 1 from pg_locks l join pg_database d on d.oid = l.database
            where l.locktype = 'advisory' and l.granted and d.datname = current_database()
          ) as held`
        return held?.held ?? false
      })
      await Promise.all([charging, requestRefund(data.orderId, 'customer cancelled')])

      expect(await eventsOf(data.orderId)).toEqual(['payment.processed', 'payment.refunded'])
      const [processed, refunded] = await dataOf(data.orderId)
      expect(refunded).toEqual({
        orderId: data.orderId,
        paymentId: processed?.paymentId,
        amount: 39.98,
        reason: 'customer cancelled',
      })
      expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 1 })
    })
  })
})
