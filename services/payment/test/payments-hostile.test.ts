// POST /payments against orders it must not pay, on a real database against infra's payment provider simulator: an
// order the saga paid already, an order that does not exist, another customer's order, a wrong amount, an order that
// was cancelled — each refused with nothing charged at the provider; an order whose payment failed, paid and moved on
// (payment.processed), or refunded when the saga cancelled it meanwhile; two payments of one order at once; and a
// client's Idempotency-Key reused after it expired, which reaches the provider under a new key.
import { randomUUID } from 'node:crypto'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { accessToken, asAdmin, eventually, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import {
  handleOrderPlaced,
  orderAwaitingPayment,
  outboxOf,
  type PlacedOrderData,
  placedOrder,
  requestRefund,
} from './support/orders.ts'
import { card, cards, orderSummary, providerToken } from './support/provider.ts'

let provider: PaymentSimulator
let payment: PaymentTestApp

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0, delayMs: 1500 })
  payment = await buildPaymentTestApp({
    ...tokenEnv,
    STRIPE_API_BASE: provider.url,
    // the tests settle what they need themselves
    PAYMENT_RECONCILE_INTERVAL_MS: '3600000',
  })
})

afterAll(async () => {
  await payment?.close()
  await provider?.close()
})

const bearer = (subject: string = randomUUID()) => ({
  authorization: `Bearer ${accessToken('user', subject)}`,
})

const pay = (body: Record<string, unknown>, headers: Record<string, string>, key: string = randomUUID()) =>
  payment.app.inject({
    method: 'POST',
    url: '/api/v1/payments',
    headers: { ...headers, 'idempotency-key': key },
    payload: body,
  })

const cardPayment = (order: Pick<PlacedOrderData, 'orderId' | 'total'>, number: string = cards.succeeds) => ({
  orderId: order.orderId,
  amount: order.total,
  currency: 'usd',
  source: { card: card(number) },
})

const eventsOf = async (orderId: string) => (await outboxOf(payment, orderId)).map((row) => row.eventType)
const customerPaymentsOf = (orderId: string) =>
  payment.sql`select status from payments where order_id = ${orderId} and payer_id is not null`

describe('POST /payments refuses what it must not pay, and charges nothing', () => {
  it('when the saga paid the order already, then 409 CONFLICT, and the provider holds one charge', async () => {
    const order = placedOrder({ token: await providerToken(provider.url, cards.succeeds) })
    expect((await handleOrderPlaced(payment, order)).outcome).toBe('processed')
    const refused = expectErrorEnvelope(
      await pay(cardPayment(order), bearer(order.customerId)),
      409,
      'CONFLICT',
    )
    expect(refused.details).toEqual([
      expect.objectContaining({ field: 'orderId', message: 'the order is paid already' }),
    ])
    // an admin is refused all the same
    expectErrorEnvelope(await pay(cardPayment(order), asAdmin()), 409, 'CONFLICT')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, charged: 1999 })
    expect(await customerPaymentsOf(order.orderId)).toEqual([])
    expect(await eventsOf(order.orderId)).toEqual(['payment.processed'])
  })

  it('when the saga is charging the order at that moment, then 409 CONFLICT (its payment step runs), and one charge', async () => {
    const order = placedOrder({ token: await providerToken(provider.url, cards.delayed) })
    const charging = handleOrderPlaced(payment, order)
    await eventually('the order step recorded its charge attempt', async () => {
      const rows = await payment.sql`select 1 from charge_attempts where order_id = ${order.orderId}`
      return rows.length > 0
    })
    const refused = expectErrorEnvelope(
      await pay(cardPayment(order), bearer(order.customerId)),
      409,
      'CONFLICT',
    )
    expect(refused.message).toContain('payment step')
    expect((await charging).outcome).toBe('processed')
    expectErrorEnvelope(await pay(cardPayment(order), bearer(order.customerId)), 409, 'CONFLICT')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1 })
  })

  it('when the order does not exist, then 404 NOT_FOUND, nothing charged, and nothing stored for the key', async () => {
    const orderId = randomUUID()
    const headers = bearer()
    const key = randomUUID()
    const body = cardPayment({ orderId, total: 999.99 })
    const answer = await pay(body, headers, key)
    const error = expectErrorEnvelope(answer, 404, 'NOT_FOUND')
    expect(error.message).toBe(`Order ${orderId} not found`)
    expect(await orderSummary(provider.url, orderId)).toMatchObject({ charges: 0, failedCharges: 0 })
    expect(await payment.sql`select 1 from payments where order_id = ${orderId}`).toEqual([])
    // not stored: the same key again is refused again, not replayed
    const again = await pay(body, headers, key)
    expectErrorEnvelope(again, 404, 'NOT_FOUND')
    expect(again.headers['idempotent-replayed']).toBeUndefined()
  })

  it("when the order is another customer's, then 404 as for an unknown one (its existence is not told), nothing charged; its customer and an admin may pay it", async () => {
    const order = await orderAwaitingPayment(payment)
    const stranger = await pay({ ...cardPayment(order), amount: 1 }, bearer())
    const error = expectErrorEnvelope(stranger, 404, 'NOT_FOUND')
    expect(error.message).toBe(`Order ${order.orderId} not found`)
    const exact = await pay(cardPayment(order), bearer())
    expectErrorEnvelope(exact, 404, 'NOT_FOUND')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 0, failedCharges: 0 })
    expect(await customerPaymentsOf(order.orderId)).toEqual([])

    const byAdmin = await pay(cardPayment(order), asAdmin())
    expect(byAdmin.statusCode).toBe(201)
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1 })
  })

  it('when the amount is not what is due, then 422 VALIDATION_ERROR naming amount, nothing charged; the same key then pays the right amount', async () => {
    const order = await orderAwaitingPayment(payment, { total: 37.5 })
    const headers = bearer(order.customerId)
    const key = randomUUID()
    for (const amount of [1, 37.49, 999.99]) {
      const error = expectErrorEnvelope(
        await pay({ ...cardPayment(order), amount }, headers, key),
        422,
        'VALIDATION_ERROR',
      )
      expect(error.details).toEqual([
        { field: 'amount', message: 'must be the amount due, 37.50', received: String(amount) },
      ])
    }
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 0, failedCharges: 0 })
    // a refused request was not stored: the key pays the order with the amount due
    const paid = await pay(cardPayment(order), headers, key)
    expect(paid.statusCode).toBe(201)
    expect(paid.json()).toMatchObject({ amount: 37.5, status: 'succeeded' })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, charged: 3750 })
  })

  it('when the order was cancelled (its refund was requested), then 409 CONFLICT and nothing charged', async () => {
    const order = await orderAwaitingPayment(payment)
    await requestRefund(payment, order.orderId)
    const refused = expectErrorEnvelope(
      await pay(cardPayment(order), bearer(order.customerId)),
      409,
      'CONFLICT',
    )
    expect(refused.message).toContain('cancelled or failed')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 0, failedCharges: 0 })
  })
})

describe('POST /payments of an order whose payment failed', () => {
  it('when its customer pays it, then one charge and payment.processed with the order content and the paymentId (the saga ships it); paying again is 409', async () => {
    const order = await orderAwaitingPayment(payment)
    const headers = bearer(order.customerId)
    const answer = await pay(cardPayment(order), headers)
    expect(answer.statusCode).toBe(201)
    const { paymentId } = answer.json()
    const outbox = await outboxOf(payment, order.orderId)
    expect(outbox.map((row) => row.eventType)).toEqual(['payment.failed', 'payment.processed'])
    const { payment: _token, ...content } = order
    expect(outbox[1]?.payload).toMatchObject({ type: 'payment.processed', source: 'payment' })
    expect(outbox[1]?.payload.data).toEqual({ ...content, paymentId })

    const again = expectErrorEnvelope(await pay(cardPayment(order), headers), 409, 'CONFLICT')
    expect(again.message).toBe('the order is paid already')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, charged: 1999 })
    // the saga asking the payment step again answers with the customer's payment, charging nothing
    expect(await handleOrderPlaced(payment, order)).toEqual({ outcome: 'already processed', paymentId })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1 })
  })

  it('when two payments of the order come at once under different keys, then one is charged (201) and the other 409', async () => {
    const order = await orderAwaitingPayment(payment)
    const headers = bearer(order.customerId)
    const answers = await Promise.all([
      pay(cardPayment(order, cards.delayed), headers),
      pay(cardPayment(order, cards.delayed), headers),
      pay(cardPayment(order), asAdmin()),
    ])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409, 409])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, refunds: 0 })
    expect((await eventsOf(order.orderId)).filter((type) => type === 'payment.processed')).toHaveLength(1)
    const [counted] = await payment.sql<{ count: number }[]>`
      select count(*)::int from payments where order_id = ${order.orderId} and status = 'succeeded'`
    expect(counted?.count).toBe(1)
  })

  it('when the saga cancels the order while the payment is at the provider, then the refund waits for it and gives it back', async () => {
    const order = await orderAwaitingPayment(payment)
    const paying = pay(cardPayment(order, cards.delayed), bearer(order.customerId))
    await eventually('the payment recorded its charge attempt', async () => {
      const rows = await payment.sql`select 1 from charge_attempts where order_id = ${order.orderId}`
      return rows.length > 0
    })
    const refunded = await requestRefund(payment, order.orderId)
    const answer = await paying
    expect(answer.statusCode).toBe(201)
    expect(refunded).toEqual({ outcome: 'refunded', paymentIds: [answer.json().paymentId] })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({
      charges: 1,
      refunds: 1,
      charged: 1999,
      refunded: 1999,
    })
    expect(await customerPaymentsOf(order.orderId)).toEqual([{ status: 'refunded' }])
    expect(await eventsOf(order.orderId)).toEqual(['payment.failed', 'payment.processed', 'payment.refunded'])
  })

  it('when the database would take a second charge of an order, then the one-charge-per-order index refuses it', async () => {
    const order = await orderAwaitingPayment(payment)
    expect((await pay(cardPayment(order), bearer(order.customerId))).statusCode).toBe(201)
    await expect(
      payment.sql`
        insert into payments (order_id, amount_cents, currency, status, provider_charge_id, order_charge)
        values (${order.orderId}, 1999, 'usd', 'succeeded', ${`ch_${randomUUID()}`}, true)`,
    ).rejects.toMatchObject({ code: '23505' })
  })
})

describe('an Idempotency-Key used again after it expired', () => {
  it('when the key is reused for a new payment, then the provider gets a new key: the new order is charged, not the old charge replayed', async () => {
    const first = await orderAwaitingPayment(payment)
    const customerId = first.customerId
    const second = await orderAwaitingPayment(payment, { customerId, total: 5.25 })
    const headers = bearer(customerId)
    const key = randomUUID()
    const paidFirst = await pay(cardPayment(first), headers, key)
    expect(paidFirst.statusCode).toBe(201)
    const [before] = await payment.sql<{ providerKey: string }[]>`
      select provider_key from idempotency_keys where key = ${key}`

    // a day later the key has expired (its row is taken over, or swept)
    await payment.sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = ${key}`
    const paidSecond = await pay(cardPayment(second), headers, key)
    expect(paidSecond.statusCode).toBe(201)
    expect(paidSecond.headers['idempotent-replayed']).toBeUndefined()
    expect(paidSecond.json()).toMatchObject({ orderId: second.orderId, amount: 5.25, status: 'succeeded' })
    expect(paidSecond.json().paymentId).not.toBe(paidFirst.json().paymentId)
    const [after] = await payment.sql<{ providerKey: string }[]>`
      select provider_key from idempotency_keys where key = ${key}`
    expect(after?.providerKey).toMatch(/^pay-[0-9a-f-]{36}$/)
    expect(after?.providerKey).not.toBe(before?.providerKey)
    expect(await orderSummary(provider.url, second.orderId)).toMatchObject({ charges: 1, charged: 525 })
    expect(await orderSummary(provider.url, first.orderId)).toMatchObject({ charges: 1, charged: 1999 })
  })

  it('when the same declined request comes again after its key expired, then it runs anew at the provider instead of replaying the old decline', async () => {
    const order = await orderAwaitingPayment(payment)
    const headers = bearer(order.customerId)
    const key = randomUUID()
    const body = cardPayment(order, cards.declined)
    expectErrorEnvelope(await pay(body, headers, key), 402, 'PAYMENT_SERVICE_ERROR')
    const replaysBefore = provider.stats().replays
    await payment.sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = ${key}`
    const again = await pay(body, headers, key)
    expectErrorEnvelope(again, 402, 'PAYMENT_SERVICE_ERROR')
    expect(again.headers['idempotent-replayed']).toBeUndefined()
    // a second charge call the provider ran (not its stored answer to the old key)
    expect(provider.stats().replays).toBe(replaysBefore)
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 0, failedCharges: 2 })
  })
})
