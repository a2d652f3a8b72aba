// A refund made at the provider outside Meridian (charge.refunded) and a chargeback (charge.dispute.created), on a real
// database with the simulator: the events are the simulator's own (made by a refund or a dispute there, read back
// from its events), delivered signed with the SDK's test helper. A refund at the provider moves the payment's refunded
// cents to the provider's amount_refunded and announces what it added (payment.refunded.v2, cause provider), once
// however often it is delivered; it is counted once with Meridian's own refunds whichever comes first, a return's
// refund whose answer was lost included. A dispute marks the payment disputed and appends payment.disputed, once.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { tokenEnv } from '@meridian/testkit'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { amountRefundRequest } from '../src/domain/amount-refund.ts'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { handleOrderPlaced, outboxOf, placedOrder, requestRefund } from './support/orders.ts'
import { cards, orderSummary, providerToken } from './support/provider.ts'

const secret = 'whsec_webhook_test_secret_0002'
/** reads any payment (GET /payments/{id} as an admin) */
const admin = { subject: 'admin', isAdmin: true, isUser: true }

let provider: PaymentSimulator
let payment: PaymentTestApp
/** the provider's API as its dashboard (or a support person with the account's key) uses it */
let stripe: Stripe

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0 })
  payment = await buildPaymentTestApp({
    ...tokenEnv,
    STRIPE_API_BASE: provider.url,
    STRIPE_WEBHOOK_SECRET: secret,
    PAYMENT_RECONCILE_INTERVAL_MS: '3600000',
  })
  const { port } = new URL(provider.url)
  stripe = new Stripe('sk_test_meridian', {
    host: '127.0.0.1',
    port: Number(port),
    protocol: 'http',
    maxNetworkRetries: 0,
  })
})

afterAll(async () => {
  await payment?.close()
  await provider?.close()
})

/** An order of 25.00 charged by the order step: its payment and the PaymentIntent it was charged as. */
async function chargedOrder() {
  const data = placedOrder({
    token: await providerToken(provider.url, cards.succeeds),
    total: 25,
    items: [{ productId: randomUUID(), quantity: 2, price: 12.5 }],
  })
  const charged = await handleOrderPlaced(payment, data)
  if (charged.outcome !== 'processed') throw new Error(`order ${data.orderId} was ${charged.outcome}`)
  const [row] = await payment.sql<{ providerChargeId: string }[]>`
    select provider_charge_id from payments where id = ${charged.paymentId}`
  if (!row) throw new Error('no payment')
  return { orderId: data.orderId, paymentId: charged.paymentId, intent: row.providerChargeId }
}

/** The simulator's newest event of `type` about the PaymentIntent, as it would deliver it (its JSON text). */
async function providerEvent(type: string, intent: string): Promise<string> {
  const events = await stripe.events.list({ type, limit: 100 })
  const event = events.data.find(
    (each) => (each.data.object as { payment_intent?: string }).payment_intent === intent,
  )
  if (!event) throw new Error(`the provider has no ${type} of ${intent}`)
  return JSON.stringify(event)
}

async function deliver(body: string) {
  const answer = await payment.app.inject({
    method: 'POST',
    url: '/api/v1/payments/webhooks/stripe',
    headers: {
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
    },
    payload: body,
  })
  expect(answer.statusCode, answer.body).toBe(200)
  const { id } = JSON.parse(body) as { id: string }
  const [row] = await payment.sql<{ outcome: string }[]>`
    select outcome from provider_events where event_id = ${id}`
  return row?.outcome
}

const paymentRow = async (paymentId: string) => {
  const [row] = await payment.sql<
    { status: string; refundedCents: number; disputeId: string | null; disputeReason: string | null }[]
  >`
    select status, refunded_cents::int, provider_dispute_id as dispute_id, dispute_reason from payments
    where id = ${paymentId}`
  return row
}

const refundsOf = (paymentId: string) =>
  payment.sql`
    select amount_cents::int, recorded_by from payment_refunds where payment_id = ${paymentId} order by created_at`

/** The events payment appended about the order after its payment.processed: type and data. */
const answersOf = async (orderId: string) =>
  (await outboxOf(payment, orderId))
    .filter((row) => row.eventType !== 'payment.processed')
    .map((row) => ({ type: row.eventType, data: row.payload.data }))

describe('a refund made at the provider (charge.refunded)', () => {
  it("when the provider's dashboard refunds part of a charge, then the payment's refunded cents follow the provider once, payment.refunded.v2 says cause provider, and the saga's refund of the rest is counted once too", async () => {
    const { orderId, paymentId, intent } = await chargedOrder()
    await stripe.refunds.create({ payment_intent: intent, amount: 300 })
    const dashboard = await providerEvent('charge.refunded', intent)

    expect(await deliver(dashboard)).toBe('refunded at the provider: 300 cents added')
    expect(await paymentRow(paymentId)).toMatchObject({ status: 'succeeded', refundedCents: 300 })
    expect(await refundsOf(paymentId)).toEqual([{ amountCents: 300, recordedBy: 'provider' }])
    expect(await answersOf(orderId)).toEqual([
      {
        type: 'payment.refunded.v2',
        data: {
          orderId,
          paymentId,
          amount: 3,
          refundedTotal: 3,
          cause: 'provider',
          reason: 'refunded at the payment provider',
        },
      },
    ])
    // delivered again: acknowledged, nothing more
    expect(await deliver(dashboard)).toBe('refunded at the provider: 300 cents added')
    expect(await answersOf(orderId)).toHaveLength(1)

    // the saga compensates: the provider's rest (2200) is refunded and counted once with the 300
    await requestRefund(payment, orderId)
    expect(await paymentRow(paymentId)).toMatchObject({ status: 'refunded', refundedCents: 2500 })
    const compensation = await providerEvent('charge.refunded', intent)
    expect(compensation).not.toBe(dashboard)
    expect(await deliver(compensation)).toBe('refunded by Meridian: 0 cents added')
    expect(await paymentRow(paymentId)).toMatchObject({ status: 'refunded', refundedCents: 2500 })
    expect((await answersOf(orderId)).map((answer) => [answer.type, answer.data.amount])).toEqual([
      ['payment.refunded.v2', 3],
      ['payment.refunded', 22],
    ])
    expect(await orderSummary(provider.url, orderId)).toMatchObject({ refunds: 2, refunded: 2500 })
    // as its readers see it
    expect(await payment.payments.getPayment(paymentId, admin)).toMatchObject({
      status: 'refunded',
      refundedAmount: 25,
    })
  })

  it("when a return's refund was made at the provider but its answer was lost, then its webhook counts it, and the return asked again refunds nothing more and is counted once", async () => {
    const { orderId, paymentId, intent } = await chargedOrder()
    const returnId = randomUUID()
    // what the return's refund sent (refund-<refundKey>, its cents): the provider made it, Meridian never heard
    await stripe.refunds.create(
      { payment_intent: intent, amount: 1250 },
      { idempotencyKey: `refund-return-${returnId}` },
    )
    expect(await deliver(await providerEvent('charge.refunded', intent))).toBe(
      'refunded by Meridian: 1250 cents added',
    )
    expect(await paymentRow(paymentId)).toMatchObject({ status: 'succeeded', refundedCents: 1250 })

    const asked = await transaction(payment.sql, (tx) =>
      payment.payments.refundAmount(
        amountRefundRequest(
          { orderId, reason: 'too small', attempt: 2, refundKey: `return-${returnId}`, amount: 12.5 },
          `return-${returnId}`,
        ),
        tx,
      ),
    )
    expect(asked).toMatchObject({ outcome: 'refunded', paymentId, amountCents: 1250 })
    expect(await paymentRow(paymentId)).toMatchObject({ status: 'succeeded', refundedCents: 1250 })
    expect(await refundsOf(paymentId)).toEqual([{ amountCents: 1250, recordedBy: 'provider' }])
    // announced once, by the return's own answer
    expect(await answersOf(orderId)).toEqual([
      {
        type: 'payment.refunded',
        data: { orderId, paymentId, amount: 12.5, reason: 'too small', refundKey: `return-${returnId}` },
      },
    ])
    expect(await orderSummary(provider.url, orderId)).toMatchObject({ refunds: 1, refunded: 1250 })
  })

  it("when Meridian's return refund comes first and its webhook after, then the webhook adds nothing; an event of a charge payment never recorded is acknowledged", async () => {
    const { orderId, paymentId, intent } = await chargedOrder()
    const returnId = randomUUID()
    await transaction(payment.sql, (tx) =>
      payment.payments.refundAmount(
        amountRefundRequest(
          { orderId, reason: 'broken', attempt: 1, refundKey: `return-${returnId}`, amount: 5 },
          `return-${returnId}`,
        ),
        tx,
      ),
    )
    expect(await deliver(await providerEvent('charge.refunded', intent))).toBe(
      'refunded by Meridian: 0 cents added',
    )
    expect(await paymentRow(paymentId)).toMatchObject({ status: 'succeeded', refundedCents: 500 })
    expect(await refundsOf(paymentId)).toEqual([{ amountCents: 500, recordedBy: 'meridian' }])
    expect((await answersOf(orderId)).map((answer) => answer.type)).toEqual(['payment.refunded'])

    // a charge made at the provider that no payment here is (another system's, or never recorded)
    const elsewhere = await stripe.paymentIntents.create({
      amount: 700,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    })
    await stripe.refunds.create({ payment_intent: elsewhere.id })
    expect(await deliver(await providerEvent('charge.refunded', elsewhere.id))).toBe('no such payment')
  })
})

describe('a chargeback (charge.dispute.created)', () => {
  it('when the provider reports a dispute, then the payment is marked disputed and payment.disputed is appended, once however often it comes', async () => {
    const { orderId, paymentId, intent } = await chargedOrder()
    const made = await fetch(`${provider.url}/v1/test_helpers/disputes`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk_test_meridian',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ payment_intent: intent, reason: 'product_not_received' }),
    })
    expect(made.status).toBe(200)
    const { id: disputeId } = (await made.json()) as { id: string }
    const body = await providerEvent('charge.dispute.created', intent)

    expect(await deliver(body)).toBe('disputed')
    expect(await paymentRow(paymentId)).toMatchObject({
      status: 'succeeded',
      disputeId,
      disputeReason: 'product_not_received',
    })
    expect(await answersOf(orderId)).toEqual([
      {
        type: 'payment.disputed',
        data: { orderId, paymentId, disputeId, amount: 25, reason: 'product_not_received' },
      },
    ])
    // the same event again, and the provider's same dispute under another event id: nothing more
    expect(await deliver(body)).toBe('disputed')
    const again = JSON.stringify({ ...JSON.parse(body), id: `evt_${randomUUID().replaceAll('-', '')}` })
    expect(await deliver(again)).toBe('disputed already')
    expect(await answersOf(orderId)).toHaveLength(1)
    const read = await payment.payments.getPayment(paymentId, admin)
    expect(read).toMatchObject({ status: 'succeeded', disputedAt: expect.any(String) })
    expect(read).not.toHaveProperty('refundedAmount')
  })
})
