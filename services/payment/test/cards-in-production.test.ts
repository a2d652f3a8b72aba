// Payment started as production (NODE_ENV=production, the deployment's own keys, the simulator on a free port as the
// provider): a card number in a request body is refused, 422 VALIDATION_ERROR naming the field, with nothing changed
// (no provider call, no key claimed, no row, no event), on every path POST /payments answers; a card number where a
// payment method id goes is refused too. What pays there is a payment method the provider made (pm_…), as the
// provider's own elements make it in the customer's browser. The order service's bodies: services/order's test of the
// same name.
import { randomBytes, randomUUID } from 'node:crypto'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { accessToken, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { orderAwaitingPayment, outboxOf, type PlacedOrderData } from './support/orders.ts'
import { card, cards, providerToken } from './support/provider.ts'

let provider: PaymentSimulator
let payment: PaymentTestApp

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0 })
  payment = await buildPaymentTestApp({
    ...tokenEnv,
    NODE_ENV: 'production',
    // the test's engines are the development ones, plaintext on this machine's loopback
    ENGINES_PLAINTEXT_ALLOWED: 'true',
    IDEMPOTENCY_SECRET: randomBytes(32).toString('base64url'),
    STRIPE_SECRET_KEY: `sk_test_${randomBytes(24).toString('hex')}`,
    STRIPE_WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('hex')}`,
    STRIPE_API_BASE: provider.url,
  })
})

afterAll(async () => {
  await payment?.close()
  await provider?.close()
})

const headersOf = (order: PlacedOrderData) => ({
  authorization: `Bearer ${accessToken('user', order.customerId)}`,
  'idempotency-key': randomUUID(),
})

/** What the payment service holds of an order, and what the provider was asked: none of it may change. */
async function footprint(order: PlacedOrderData) {
  const [payments, attempts, keys] = await Promise.all([
    payment.sql`select 1 from payments where order_id = ${order.orderId}`,
    payment.sql`select 1 from charge_attempts where order_id = ${order.orderId}`,
    payment.sql`select 1 from idempotency_keys where scope = ${order.customerId}`,
  ])
  return {
    payments: payments.length,
    attempts: attempts.length,
    keys: keys.length,
    events: (await outboxOf(payment, order.orderId)).map((row) => row.eventType),
    providerRequests: provider.stats().requests,
  }
}

describe('payment in production: no card number in a request body', () => {
  it('when a body carries a card (valid, invalid, or beside a token) on any path of POST /payments, then 422 VALIDATION_ERROR naming source.card, the number never echoed, and nothing changed', async () => {
    const order = await orderAwaitingPayment(payment)
    const before = await footprint(order)
    expect(before).toMatchObject({ payments: 0, attempts: 0, keys: 0, events: ['payment.failed'] })
    const sources = [
      { card: card(cards.succeeds) },
      { card: card('4000 0000 0000 0002') },
      { card: { number: '1234567890123456', expMonth: 13, expYear: 1999, cvc: 'x' } },
      { card: cards.succeeds },
      { token: 'pm_card_visa', card: card(cards.succeeds) },
    ]
    for (const url of ['/api/v1/payments', '/api/payments', '/payments'])
      for (const source of sources) {
        const answer = await payment.app.inject({
          method: 'POST',
          url,
          headers: headersOf(order),
          payload: { orderId: order.orderId, amount: order.total, currency: 'usd', source },
        })
        const context = `${url} ${JSON.stringify(Object.keys(source))}`
        const error = expectErrorEnvelope(answer, 422, 'VALIDATION_ERROR', { context })
        expect(error.details, context).toEqual([
          { field: 'source.card', message: expect.stringContaining('not accepted in production') },
        ])
        expect(answer.body, context).not.toMatch(/4242|0002|1234567890/)
      }
    expect(await footprint(order)).toEqual(before)
    // nothing logged the number either
    expect(JSON.stringify(payment.logs)).not.toMatch(/4242424242424242|4000 ?0000 ?0000 ?0002/)
  })

  it('when a card number is sent where the payment method goes, then 422 naming source.token, and nothing changed', async () => {
    const order = await orderAwaitingPayment(payment)
    const before = await footprint(order)
    for (const token of [
      cards.succeeds,
      '4242 4242 4242 4242',
      'card_4242424242424242',
      'not-a-payment-method',
    ]) {
      const answer = await payment.app.inject({
        method: 'POST',
        url: '/api/v1/payments',
        headers: headersOf(order),
        payload: { orderId: order.orderId, amount: order.total, source: { token } },
      })
      const error = expectErrorEnvelope(answer, 422, 'VALIDATION_ERROR', { context: token })
      expect(error.details?.map((detail) => detail.field)).toContain('source.token')
      expect(answer.body).not.toContain('4242')
    }
    expect(await footprint(order)).toEqual(before)
  })

  it('when the order is paid with a payment method the provider made (pm_…), then 201: production pays without a card number', async () => {
    const order = await orderAwaitingPayment(payment)
    const token = await providerToken(provider.url, cards.succeeds)
    expect(token).toMatch(/^pm_/)
    const answer = await payment.app.inject({
      method: 'POST',
      url: '/api/v1/payments',
      headers: headersOf(order),
      payload: { orderId: order.orderId, amount: order.total, source: { token } },
    })
    expect(answer.statusCode, answer.body).toBe(201)
    expect(answer.json()).toMatchObject({ status: 'succeeded', brand: 'visa', last4: '4242' })
  })
})
