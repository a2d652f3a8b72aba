// Payment's consumers: order.placed charges the order at the provider (simulator) and appends payment.processed or
// payment.failed; a redelivery charges once; order.cancelled and order.failed refund. Once through the real broker
// on a topic of this file's own, then each handler as the runner calls it.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import {
  consume,
  createEvent,
  createEventProducer,
  type EventConsumer,
  type EventProducer,
} from '@meridian/events'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { eventually, freshEventTopics, type TestEventTopics, testKafka, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { paymentConsumers } from '../src/events/consumers.ts'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { cards, orderSummary, providerToken } from './support/provider.ts'

let provider: PaymentSimulator
let payment: PaymentTestApp
let topics: TestEventTopics
let producer: EventProducer
let running: EventConsumer | undefined

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0 })
  payment = await buildPaymentTestApp({ PAYMENT_PROVIDER_URL: provider.url })
  topics = await freshEventTopics('order.placed')
  producer = await createEventProducer(testKafka())
})

afterAll(async () => {
  await running?.stop()
  await producer?.disconnect()
  await topics?.delete()
  await payment?.close()
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
    const [placedConsumer] = paymentConsumers(payment.payments, {
      group: uniqueName('payment'),
      topics: { 'order.placed': topics.topic },
    }).filter((each) => each.type === 'order.placed')
    if (!placedConsumer) throw new Error('payment has no order.placed consumer')
    running = await consume({
      ...placedConsumer,
      kafka: testKafka(),
      sql: payment.sql,
      logger: payment.app.log,
      retryDelaysMs: [200, 200, 200],
    })

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

  it('when listed, then one per event type payment reacts to, all in the payment group', () => {
    expect(payment.consumers.map(({ type, group, topic }) => ({ type, group, topic }))).toEqual([
      { type: 'order.placed', group: 'payment', topic: undefined },
      { type: 'order.cancelled', group: 'payment', topic: undefined },
      { type: 'order.failed', group: 'payment', topic: undefined },
    ])
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
    expect((await outboxOf(data.orderId)).map((row) => row.payload.data)).toEqual([
      { orderId: data.orderId, reason: 'no payment method' },
    ])
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

  it('when the same order is placed again under a new event id, then the provider key charges it once and nothing is appended', async () => {
    const data = placed(await providerToken(provider.url, cards.succeeds))
    await handle('order.placed', data)
    await handle('order.placed', data)
    expect((await outboxOf(data.orderId)).map((row) => row.eventType)).toEqual(['payment.processed'])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1 })
  })

  it('when a charged order is cancelled or fails, then it is refunded at the provider and payment.refunded is appended; twice refunds once', async () => {
    const token = await providerToken(provider.url, cards.succeeds)
    const [cancelled, failed] = [placed(token), placed(token)]
    await handle('order.placed', cancelled)
    await handle('order.placed', failed)
    const paymentIdOf = async (orderId: string) => (await outboxOf(orderId))[0]?.payload.data.paymentId

    await handle('order.cancelled', { orderId: cancelled.orderId, reason: 'customer cancelled' })
    await handle('order.failed', { orderId: failed.orderId, reason: 'out of stock', failedStep: 'inventory' })
    expect((await outboxOf(cancelled.orderId)).at(-1)?.payload).toMatchObject({
      type: 'payment.refunded',
      data: {
        orderId: cancelled.orderId,
        paymentId: await paymentIdOf(cancelled.orderId),
        amount: 39.98,
        reason: 'customer cancelled',
      },
    })
    expect((await outboxOf(failed.orderId)).map((row) => row.eventType)).toEqual([
      'payment.processed',
      'payment.refunded',
    ])
    expect(await orderSummary(provider.url, cancelled.orderId)).toMatchObject({ refunds: 1, refunded: 3998 })
    const [row] = await payment.sql`
      select status, refunded_cents::int from payments where order_id = ${cancelled.orderId}`
    expect(row).toEqual({ status: 'refunded', refundedCents: 3998 })

    // cancelled again, and an order that was never charged: nothing to refund, nothing appended
    await handle('order.cancelled', { orderId: cancelled.orderId, reason: 'again' })
    const never = randomUUID()
    await handle('order.cancelled', { orderId: never, reason: 'customer cancelled' })
    expect((await outboxOf(cancelled.orderId)).map((each) => each.eventType)).toEqual([
      'payment.processed',
      'payment.refunded',
    ])
    expect(await outboxOf(never)).toEqual([])
    expect(await orderSummary(provider.url, cancelled.orderId)).toMatchObject({ refunds: 1 })
  })
})
