// The charge reconciler: a charge of the order step whose outcome the provider did not tell in time (the hang card,
// past the adapter's 5 s timeout) leaves a pending charge attempt; a round replays it at the provider (simulator)
// with the same key and parameters and settles it: the late charge refunded when the saga compensated meanwhile,
// payment.processed when the saga still waits, left pending while the provider still runs the first call; a
// customer's payment (POST /payments) timed out the same way pays the order or is refunded. Real
// PostgreSQL and the simulator; each round is called directly (the clock is set an hour apart).
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { accessToken, eventually, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChargeAttempt } from '../src/data/charge-attempts-repository.ts'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { orderAwaitingPayment } from './support/orders.ts'
import { cards, orderSummary, providerToken } from './support/provider.ts'

/** the hang card answers (and charges) this long after the call: past the adapter's 5 s timeout */
const hangMs = 6500

let provider: PaymentSimulator
let payment: PaymentTestApp

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0, hangMs })
  payment = await buildPaymentTestApp({
    ...tokenEnv,
    STRIPE_API_BASE: provider.url,
    // the clock stays out of the way: the tests run each round themselves
    PAYMENT_RECONCILE_INTERVAL_MS: '3600000',
    PAYMENT_RECONCILE_AFTER_MS: '1000',
  })
})

afterAll(async () => {
  await payment?.close()
  await provider?.close()
})

interface OutboxRow {
  eventType: string
  payload: { type: string; source: string; data: Record<string, unknown> }
}

const outboxOf = (orderId: string) =>
  payment.sql<OutboxRow[]>`select event_type, payload from outbox where aggregate_id = ${orderId} order by id`
const eventsOf = async (orderId: string) => (await outboxOf(orderId)).map((row) => row.eventType)
const dataOf = async (orderId: string) => (await outboxOf(orderId)).map((row) => row.payload.data)

const attemptOf = async (orderId: string) => {
  const [row] = await payment.sql<Pick<ChargeAttempt, 'status' | 'token' | 'checkedAt'>[]>`
    select status, token, checked_at, amount_cents::int, currency, idempotency_key
    from charge_attempts where order_id = ${orderId}`
  return row
}

const paymentsOf = (orderId: string) =>
  payment.sql`
    select id, status, amount_cents::int, refunded_cents::int, provider_charge_id is not null as charged
    from payments where order_id = ${orderId} order by created_at`

const placed = (token: string, orderId: string = randomUUID()) => ({
  orderId,
  customerId: randomUUID(),
  total: 39.98,
  items: [{ productId: randomUUID(), quantity: 2, price: 19.99 }],
  customerEmail: 'buyer@example.com',
  payment: { token },
})
type Placed = ReturnType<typeof placed>

const chargeOrder = (data: Placed) => transaction(payment.sql, (tx) => payment.payments.chargeOrder(data, tx))
const refundOrder = (orderId: string, reason = 'payment timed out') =>
  transaction(payment.sql, (tx) => payment.payments.refundOrder({ orderId, reason }, tx))
const round = () => payment.reconciler.reconcile()
const resultOf = (results: Awaited<ReturnType<typeof round>>, orderId: string) =>
  results.filter((each) => each.orderId === orderId)

/** Charges the hang card: the adapter gives up after 5 s (503); the provider charges at `hangMs`. */
async function timedOutCharge(): Promise<Placed> {
  const data = placed(await providerToken(provider.url, cards.hangs))
  const started = Date.now()
  await expect(chargeOrder(data)).rejects.toMatchObject({ statusCode: 503 })
  expect(Date.now() - started).toBeGreaterThanOrEqual(4900)
  return data
}

const providerCharged = (orderId: string) =>
  eventually(
    "the provider's first call charged",
    async () => (await orderSummary(provider.url, orderId)).charges === 1,
  )

describe('a charge whose outcome was unknown', () => {
  it('when the provider timed out and the saga compensated, then a round refunds the late charge and answers payment.refunded; a second round does nothing', async () => {
    const data = await timedOutCharge()
    // the rolled-back charge left its attempt (the token only, no card data), nothing else
    expect(await attemptOf(data.orderId)).toEqual({
      status: 'pending',
      token: data.payment.token,
      checkedAt: null,
      amountCents: 3998,
      currency: 'usd',
      idempotencyKey: `order-${data.orderId}`,
    })
    expect(await paymentsOf(data.orderId)).toEqual([])
    expect(await outboxOf(data.orderId)).toEqual([])

    // the saga gave up and compensates: nothing recorded to refund
    expect(await refundOrder(data.orderId)).toEqual({ outcome: 'nothing to refund' })
    await providerCharged(data.orderId)
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 0 })

    const [reconciled] = resultOf(await round(), data.orderId)
    expect(reconciled).toEqual({ orderId: data.orderId, outcome: 'refunded', paymentId: expect.any(String) })
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({
      charges: 1,
      refunds: 1,
      charged: 3998,
      refunded: 3998,
    })
    expect(await paymentsOf(data.orderId)).toEqual([
      {
        id: reconciled?.paymentId,
        status: 'refunded',
        amountCents: 3998,
        refundedCents: 3998,
        charged: true,
      },
    ])
    expect(await dataOf(data.orderId)).toEqual([
      { orderId: data.orderId, amount: 0, reason: 'payment timed out' },
      {
        orderId: data.orderId,
        paymentId: reconciled?.paymentId,
        amount: 39.98,
        reason: 'payment timed out',
      },
    ])
    expect((await outboxOf(data.orderId)).map((row) => row.payload)).toEqual([
      expect.objectContaining({ type: 'payment.refunded', source: 'payment' }),
      expect.objectContaining({ type: 'payment.refunded', source: 'payment' }),
    ])
    expect((await attemptOf(data.orderId))?.status).toBe('settled')
    expect(
      await payment.app.metrics.registry.getSingleMetricAsString('meridian_payment_reconciled_total'),
    ).toMatch(/meridian_payment_reconciled_total\{outcome="refunded"[^}]*\} [1-9]/)

    // settled: a second round leaves it alone
    expect(resultOf(await round(), data.orderId)).toEqual([])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 1 })
    expect(await eventsOf(data.orderId)).toEqual(['payment.refunded', 'payment.refunded'])
    // and the saga's late retry of the charge is still refused
    expect(await chargeOrder(data)).toEqual({ outcome: 'failed', reason: 'the order was cancelled' })
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 1 })
  })

  it('when the provider timed out and no refund was requested, then a round records the payment and answers payment.processed; a retry answers with the same payment', async () => {
    const data = await timedOutCharge()
    await providerCharged(data.orderId)

    const [reconciled] = resultOf(await round(), data.orderId)
    expect(reconciled).toEqual({ orderId: data.orderId, outcome: 'processed', paymentId: expect.any(String) })
    const { payment: _token, ...orderData } = data
    expect((await outboxOf(data.orderId)).map((row) => row.payload)).toEqual([
      expect.objectContaining({
        type: 'payment.processed',
        source: 'payment',
        data: { ...orderData, paymentId: reconciled?.paymentId },
      }),
    ])
    expect(await paymentsOf(data.orderId)).toEqual([
      { id: reconciled?.paymentId, status: 'succeeded', amountCents: 3998, refundedCents: 0, charged: true },
    ])
    expect((await attemptOf(data.orderId))?.status).toBe('settled')

    // the saga asks again (payment.requested): the same payment answers, nothing charged twice
    expect(await chargeOrder(data)).toEqual({
      outcome: 'already processed',
      paymentId: reconciled?.paymentId,
    })
    expect(resultOf(await round(), data.orderId)).toEqual([])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 0 })
  })

  it('when the provider still runs the first call (409 idempotency_in_progress), then the attempt stays pending and nothing is answered', async () => {
    const data = await timedOutCharge()
    // the provider answers the hang card at 6.5 s: the round comes before it
    const [reconciled] = resultOf(await round(), data.orderId)
    expect(reconciled).toMatchObject({ orderId: data.orderId, outcome: 'pending' })
    expect(await attemptOf(data.orderId)).toMatchObject({ status: 'pending', checkedAt: expect.any(Date) })
    expect(await outboxOf(data.orderId)).toEqual([])
    expect(await paymentsOf(data.orderId)).toEqual([])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 0 })

    // once the provider finished, the next round settles it
    await providerCharged(data.orderId)
    expect(resultOf(await round(), data.orderId)).toEqual([
      { orderId: data.orderId, outcome: 'processed', paymentId: expect.any(String) },
    ])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 0 })
  })
})

describe("a customer's payment whose outcome was unknown (POST /payments)", () => {
  const bearer = (subject: string) => ({ authorization: `Bearer ${accessToken('user', subject)}` })

  /** An order awaiting payment, paid with the hang card: the adapter gives up after 5 s (503). */
  async function timedOutPayment() {
    const order = await orderAwaitingPayment(payment, { total: 12.5 })
    const token = await providerToken(provider.url, cards.hangs)
    const answer = await payment.app.inject({
      method: 'POST',
      url: '/api/v1/payments',
      headers: { ...bearer(order.customerId), 'idempotency-key': randomUUID() },
      payload: { orderId: order.orderId, amount: 12.5, source: { token } },
    })
    expect(answer.statusCode).toBe(503)
    expect(await attemptOf(order.orderId)).toMatchObject({ status: 'pending', token })
    return order
  }

  it('when the customer never retries, then a round records the late charge as their payment and answers payment.processed: the order moves on', async () => {
    const order = await timedOutPayment()
    await providerCharged(order.orderId)
    const [reconciled] = resultOf(await round(), order.orderId)
    expect(reconciled).toEqual({
      orderId: order.orderId,
      outcome: 'processed',
      paymentId: expect.any(String),
    })
    const { payment: _token, ...content } = order
    expect(await eventsOf(order.orderId)).toEqual(['payment.failed', 'payment.processed'])
    expect((await dataOf(order.orderId))[1]).toEqual({ ...content, paymentId: reconciled?.paymentId })
    const [row] =
      await payment.sql`select payer_id, status from payments where id = ${reconciled?.paymentId ?? ''}`
    expect(row).toEqual({ payerId: order.customerId, status: 'succeeded' })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, refunds: 0 })
  })

  it('when the saga cancelled the order meanwhile, then a round refunds the late charge and answers payment.refunded', async () => {
    const order = await timedOutPayment()
    expect(await refundOrder(order.orderId, 'cancelled by the customer')).toEqual({
      outcome: 'nothing to refund',
    })
    await providerCharged(order.orderId)
    const [reconciled] = resultOf(await round(), order.orderId)
    expect(reconciled).toEqual({ orderId: order.orderId, outcome: 'refunded', paymentId: expect.any(String) })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({
      charges: 1,
      refunds: 1,
      charged: 1250,
      refunded: 1250,
    })
    expect(await eventsOf(order.orderId)).toEqual(['payment.failed', 'payment.refunded', 'payment.refunded'])
    expect((await dataOf(order.orderId))[2]).toEqual({
      orderId: order.orderId,
      paymentId: reconciled?.paymentId,
      amount: 12.5,
      reason: 'cancelled by the customer',
    })
  })
})

describe('attempts', () => {
  it('when a charge succeeds or is declined in time, then its attempt is settled and no round touches it', async () => {
    const paid = placed(await providerToken(provider.url, cards.succeeds))
    const declined = placed(await providerToken(provider.url, cards.declined))
    expect(await chargeOrder(paid)).toMatchObject({ outcome: 'processed' })
    expect(await chargeOrder(declined)).toMatchObject({ outcome: 'failed' })
    expect((await attemptOf(paid.orderId))?.status).toBe('settled')
    expect((await attemptOf(declined.orderId))?.status).toBe('settled')
    const results = await payment.reconciler.reconcile({ olderThanMs: 0 })
    expect([...resultOf(results, paid.orderId), ...resultOf(results, declined.orderId)]).toEqual([])
  })

  it('when the recorded call never reached the provider and is declined on replay, then payment.failed; an order another process holds is skipped first', async () => {
    const data = placed(await providerToken(provider.url, cards.declined))
    const { payment: _token, ...orderData } = data
    // as chargeOrder records it right before a call that never arrived (the provider was down)
    await payment.sql`
      insert into charge_attempts (idempotency_key, order_id, amount_cents, currency, token, order_data, created_at)
      values (${`order-${data.orderId}`}, ${data.orderId}, 3998, 'usd', ${data.payment.token},
        ${payment.sql.json(orderData)}, now() - interval '1 minute')`

    // a charge of the order runs elsewhere (it holds the order's lock): skipped, asked nothing
    let release: () => void = () => undefined
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    let locked: () => void = () => undefined
    const holding = new Promise<void>((resolve) => {
      locked = resolve
    })
    const holder = transaction(payment.sql, async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtextextended(${`payment-order:${data.orderId}`}, 0))`
      locked()
      await released
    })
    await holding
    try {
      expect(resultOf(await round(), data.orderId)).toEqual([
        { orderId: data.orderId, outcome: 'skipped', detail: 'locked' },
      ])
    } finally {
      release()
      await holder
    }
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 0, failedCharges: 0 })

    expect(resultOf(await round(), data.orderId)).toEqual([
      { orderId: data.orderId, outcome: 'failed', detail: 'Your card was declined.' },
    ])
    expect(await dataOf(data.orderId)).toEqual([{ orderId: data.orderId, reason: 'Your card was declined.' }])
    expect(await paymentsOf(data.orderId)).toEqual([
      { id: expect.any(String), status: 'failed', amountCents: 3998, refundedCents: 0, charged: false },
    ])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 0, failedCharges: 1 })
    expect((await attemptOf(data.orderId))?.status).toBe('settled')
  })
})
