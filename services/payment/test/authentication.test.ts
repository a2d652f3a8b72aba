// 3-D Secure on the order step, against the simulator (Stripe's shape) and real PostgreSQL: a card that asks the
// customer to authenticate leaves the charge waiting (payment.action_required with the provider's page and a
// deadline, the attempt `authenticating`, nothing charged); the customer's confirmation on the provider's page is
// settled by the provider's webhook or by the saga's asking again, whichever comes first, once (payment.processed);
// a refusal fails it (payment.failed); a payment still waiting past its deadline is cancelled at the provider and
// fails, by the saga's asking again or by a reconciler round; an order cancelled while it waits is refunded at once
// when the customer confirms afterwards.
import { randomUUID } from 'node:crypto'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { tokenEnv } from '@meridian/testkit'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authenticationExpired } from '../src/clients/payment-provider.ts'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { handleOrderPlaced, outboxOf, placedOrder, requestRefund } from './support/orders.ts'
import { orderSummary } from './support/provider.ts'
import { providerEvent } from './support/provider-events.ts'

const secret = 'whsec_authentication_test_0001'
const returnUrl = 'http://127.0.0.1:9/shop/orders'
/** Stripe's test payment method whose card always asks for 3-D Secure */
const threeDSecureCard = 'pm_card_threeDSecure2Required'

let provider: PaymentSimulator
/** waits ten minutes for the customer */
let payment: PaymentTestApp
/** gives the customer one second: a payment still waiting after it is past its deadline */
let hurried: PaymentTestApp

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0 })
  const env = {
    ...tokenEnv,
    STRIPE_API_BASE: provider.url,
    STRIPE_WEBHOOK_SECRET: secret,
    PAYMENT_RETURN_URL: returnUrl,
    // the clock stays out of the way: the tests run a round themselves
    PAYMENT_RECONCILE_INTERVAL_MS: '3600000',
  }
  payment = await buildPaymentTestApp(env)
  hurried = await buildPaymentTestApp({ ...env, PAYMENT_AUTHENTICATION_TIMEOUT_MS: '1000' })
})

afterAll(async () => {
  await hurried?.close()
  await payment?.close()
  await provider?.close()
})

interface Waiting {
  orderId: string
  intentId: string
  authenticateUrl: string
  expiresAt: string
}

/** An order placed with the 3-D Secure card through `app`'s order step: it waits for the customer. */
async function orderWaiting(
  app: PaymentTestApp,
): Promise<{ data: ReturnType<typeof placedOrder> } & Waiting> {
  const data = placedOrder({ token: threeDSecureCard, total: 42.5, items: [] })
  data.items = [{ productId: randomUUID(), quantity: 1, price: 42.5 }]
  expect(await handleOrderPlaced(app, data)).toEqual({ outcome: 'action required' })
  const events = await outboxOf(app, data.orderId)
  expect(events.map((event) => event.eventType)).toEqual(['payment.action_required'])
  const announced = events[0]?.payload.data as { authenticateUrl: string; expiresAt: string }
  const [attempt] = await app.sql<{ status: string; intentId: string }[]>`
    select status, intent_id from charge_attempts where order_id = ${data.orderId}`
  expect(attempt?.status).toBe('authenticating')
  return { data, orderId: data.orderId, intentId: attempt?.intentId ?? '', ...announced }
}

/** The customer on the provider's page: confirms or refuses (the form the page posts). */
async function authenticate(waiting: Waiting, outcome: 'confirm' | 'refuse'): Promise<void> {
  const page = await fetch(waiting.authenticateUrl)
  expect(page.status).toBe(200)
  expect(await page.text()).toContain('42.50')
  const answer = await fetch(`${provider.url}/3ds/${waiting.intentId}/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `outcome=${outcome}`,
    redirect: 'manual',
  })
  // back to the shop's order page, as Stripe sends the browser
  expect(answer.status).toBe(303)
  expect(answer.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:9\/shop\/orders\?payment_intent=pi_/)
}

/** The provider's webhook about the payment, signed as the provider signs it. */
function deliver(app: PaymentTestApp, type: string, intentId: string) {
  const body = JSON.stringify(providerEvent(type, { id: intentId, object: 'payment_intent' }, null))
  return app.app.inject({
    method: 'POST',
    url: '/api/v1/payments/webhooks/stripe',
    headers: {
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
    },
    payload: body,
  })
}

const eventTypes = async (app: PaymentTestApp, orderId: string) =>
  (await outboxOf(app, orderId)).map((event) => event.eventType)

const paymentsOf = (app: PaymentTestApp, orderId: string) =>
  app.sql<{ status: string; amountCents: number; failureReason: string | null }[]>`
    select status, amount_cents::float8 as amount_cents, failure_reason from payments where order_id = ${orderId}`

describe('3-D Secure on the order step', () => {
  it("when the card asks for authentication, then the charge waits with the provider's page and a deadline, and nothing is charged", async () => {
    const before = Date.now()
    const waiting = await orderWaiting(payment)
    expect(waiting.authenticateUrl).toBe(`${provider.url}/3ds/${waiting.intentId}`)
    const expiresIn = Date.parse(waiting.expiresAt) - before
    expect(expiresIn).toBeGreaterThan(590_000)
    expect(expiresIn).toBeLessThanOrEqual(600_000 + (Date.now() - before))
    expect(await paymentsOf(payment, waiting.orderId)).toEqual([])
    expect((await orderSummary(provider.url, waiting.orderId)).charges).toBe(0)
  })

  it('when the saga asks again while the customer has not answered, then payment.action_required is sent again with the same page and deadline', async () => {
    const waiting = await orderWaiting(payment)
    expect(await handleOrderPlaced(payment, waiting.data)).toEqual({ outcome: 'action required' })
    const events = await outboxOf(payment, waiting.orderId)
    expect(events.map((event) => event.payload.data)).toEqual([
      { orderId: waiting.orderId, authenticateUrl: waiting.authenticateUrl, expiresAt: waiting.expiresAt },
      { orderId: waiting.orderId, authenticateUrl: waiting.authenticateUrl, expiresAt: waiting.expiresAt },
    ])
  })

  it('when the customer confirms and the webhook says so, then the charge is recorded and payment.processed goes out once, however often the webhook and the saga come', async () => {
    const waiting = await orderWaiting(payment)
    await authenticate(waiting, 'confirm')
    const answer = await deliver(payment, 'payment_intent.succeeded', waiting.intentId)
    expect(answer.statusCode).toBe(200)
    expect(await paymentsOf(payment, waiting.orderId)).toEqual([
      { status: 'succeeded', amountCents: 4250, failureReason: null },
    ])
    // the same news again, by another event and by the saga asking: nothing more happens
    expect((await deliver(payment, 'payment_intent.succeeded', waiting.intentId)).statusCode).toBe(200)
    const again = await handleOrderPlaced(payment, waiting.data)
    expect(again.outcome).toBe('already processed')
    expect(await eventTypes(payment, waiting.orderId)).toEqual([
      'payment.action_required',
      'payment.processed',
      'payment.processed',
    ])
    expect(await paymentsOf(payment, waiting.orderId)).toHaveLength(1)
    expect((await orderSummary(provider.url, waiting.orderId)).charges).toBe(1)
  })

  it('when the customer confirms and the webhook is lost, then the saga asking again settles it', async () => {
    const waiting = await orderWaiting(payment)
    await authenticate(waiting, 'confirm')
    const answered = await handleOrderPlaced(payment, waiting.data)
    expect(answered.outcome).toBe('processed')
    expect(await eventTypes(payment, waiting.orderId)).toEqual([
      'payment.action_required',
      'payment.processed',
    ])
    const [attempt] = await payment.sql<{ status: string }[]>`
      select status from charge_attempts where order_id = ${waiting.orderId}`
    expect(attempt?.status).toBe('settled')
  })

  it('when the customer refuses, then the payment fails with the reason and nothing is charged', async () => {
    const waiting = await orderWaiting(payment)
    await authenticate(waiting, 'refuse')
    expect((await deliver(payment, 'payment_intent.payment_failed', waiting.intentId)).statusCode).toBe(200)
    expect(await eventTypes(payment, waiting.orderId)).toEqual(['payment.action_required', 'payment.failed'])
    const [failed] = await paymentsOf(payment, waiting.orderId)
    expect(failed?.status).toBe('failed')
    expect(failed?.failureReason).toMatch(/authenticat/i)
    // asked again, the saga gets the same answer, and the provider is not asked to charge
    const again = await handleOrderPlaced(payment, waiting.data)
    expect(again.outcome).toBe('already failed')
    expect((await orderSummary(provider.url, waiting.orderId)).charges).toBe(0)
  })

  it('when the deadline passes and the saga asks again, then the payment is cancelled at the provider and fails as not completed in time', async () => {
    const waiting = await orderWaiting(hurried)
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(waiting.expiresAt) - Date.now())),
    )
    const answered = await handleOrderPlaced(hurried, waiting.data)
    expect(answered).toEqual({ outcome: 'failed', reason: authenticationExpired })
    expect(await eventTypes(hurried, waiting.orderId)).toEqual(['payment.action_required', 'payment.failed'])
    // the page now says there is nothing to authenticate: the customer can no longer pay with it
    expect((await fetch(waiting.authenticateUrl)).status).toBe(409)
    expect((await orderSummary(provider.url, waiting.orderId)).charges).toBe(0)
  })

  it('when the deadline passes and nobody asks, then a reconciler round cancels and fails it', async () => {
    const waiting = await orderWaiting(hurried)
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(waiting.expiresAt) - Date.now())),
    )
    const results = await hurried.reconciler.reconcile()
    expect(results).toContainEqual({ orderId: waiting.orderId, outcome: 'failed' })
    expect(await eventTypes(hurried, waiting.orderId)).toEqual(['payment.action_required', 'payment.failed'])
    expect(await hurried.reconciler.reconcile()).not.toContainEqual(
      expect.objectContaining({ orderId: waiting.orderId }),
    )
  })

  it('when the customer confirms after the deadline passed but before the cancel, then the confirmation wins: the charge is recorded, not cancelled', async () => {
    const waiting = await orderWaiting(hurried)
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(waiting.expiresAt) - Date.now())),
    )
    await authenticate(waiting, 'confirm')
    const answered = await handleOrderPlaced(hurried, waiting.data)
    expect(answered.outcome).toBe('processed')
    expect((await orderSummary(provider.url, waiting.orderId)).charges).toBe(1)
  })

  it('when the order is cancelled while it waits and the customer confirms afterwards, then the charge is refunded at once', async () => {
    const waiting = await orderWaiting(payment)
    expect((await requestRefund(payment, waiting.orderId)).outcome).toBe('nothing to refund')
    await authenticate(waiting, 'confirm')
    expect((await deliver(payment, 'payment_intent.succeeded', waiting.intentId)).statusCode).toBe(200)
    expect(await paymentsOf(payment, waiting.orderId)).toEqual([
      { status: 'refunded', amountCents: 4250, failureReason: null },
    ])
    const summary = await orderSummary(provider.url, waiting.orderId)
    expect(summary).toMatchObject({ charges: 1, refunds: 1, charged: 4250, refunded: 4250 })
  })
})
