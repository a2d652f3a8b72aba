// POST /payments under an Idempotency-Key and GET /api/v1/payments/:id, on a real database against infra's payment
// provider simulator: one charge per key, replays, conflicts, per-caller keys, the provider's failures as the
// spec's errors (rule 5), and card numbers that never reach the logs. Every payment pays an order payment heard of
// (order.placed handed to the order step, as its consumer does): an order without a payment method answers
// payment.failed and awaits its customer's payment. The hostile payments of payments-hostile.test.ts.
import { randomUUID } from 'node:crypto'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { legacyRequestFingerprint } from '@meridian/service-kit'
import { accessToken, asAdmin, eventually, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import {
  handleOrderPlaced,
  orderAwaitingPayment,
  type PlacedOrderData,
  placedOrder,
} from './support/orders.ts'
import { card, cards, closedPort, orderSummary, providerToken } from './support/provider.ts'

let provider: PaymentSimulator
let payment: PaymentTestApp

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0, delayMs: 1000, hangMs: 2500 })
  payment = await buildPaymentTestApp({ ...tokenEnv, STRIPE_API_BASE: provider.url })
})

afterAll(async () => {
  await payment?.close()
  await provider?.close()
})

const bearer = (subject: string = randomUUID()) => ({
  authorization: `Bearer ${accessToken('user', subject)}`,
})

interface PayOptions {
  /** null: no Idempotency-Key header */
  key?: string | null
  /** default: the order's customer */
  headers?: Record<string, string>
  url?: string
  app?: PaymentTestApp
}

function pay(
  body: Record<string, unknown> & { orderId: string },
  { key = randomUUID(), headers, url, app }: PayOptions & { headers: Record<string, string> },
) {
  return (app ?? payment).app.inject({
    method: 'POST',
    url: url ?? '/api/v1/payments',
    headers: { ...headers, ...(key === null ? {} : { 'idempotency-key': key }) },
    payload: body,
  })
}

/** A card payment of the amount due for `order`. */
const cardPayment = (order: PlacedOrderData, number: string = cards.succeeds) => ({
  orderId: order.orderId,
  amount: order.total,
  currency: 'usd',
  source: { card: card(number) },
})

/** An order awaiting payment, and what pays it as its customer. */
async function payable(app: PaymentTestApp = payment) {
  const order = await orderAwaitingPayment(app)
  return { order, headers: bearer(order.customerId) }
}

describe('POST /payments', () => {
  it('when a card pays an order awaiting payment, then 201 with the payment (brand and last four only) and its Location', async () => {
    const { order, headers } = await payable()
    const body = cardPayment(order)
    const answer = await pay(body, { headers })
    expect(answer.statusCode).toBe(201)
    const created = answer.json()
    expect(created).toEqual({
      paymentId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      orderId: order.orderId,
      status: 'succeeded',
      amount: 19.99,
      brand: 'visa',
      last4: '4242',
    })
    expect(answer.headers.location).toBe(`/api/v1/payments/${created.paymentId}`)
    expect(answer.headers['idempotent-replayed']).toBeUndefined()
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, charged: 1999 })
    const [row] = await payment.sql`
      select amount_cents::int, status, brand, last4, payer_id from payments where id = ${created.paymentId}`
    expect(row).toEqual({
      amountCents: 1999,
      status: 'succeeded',
      brand: 'visa',
      last4: '4242',
      payerId: order.customerId,
    })

    // readable at the Location by its payer and an admin; anyone else 403; none 404
    const location = answer.headers.location as string
    const read = await payment.app.inject({ method: 'GET', url: location, headers })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toEqual(created)
    const admin = await payment.app.inject({ method: 'GET', url: location, headers: asAdmin() })
    expect(admin.statusCode).toBe(200)
    const stranger = await payment.app.inject({ method: 'GET', url: location, headers: bearer() })
    expectErrorEnvelope(stranger, 403, 'FORBIDDEN')
    const missing = await payment.app.inject({
      method: 'GET',
      url: `/api/v1/payments/${randomUUID()}`,
      headers: asAdmin(),
    })
    expectErrorEnvelope(missing, 404, 'NOT_FOUND')
    // the bare /payments and /api aliases answer too
    for (const url of ['/payments', '/api/payments']) {
      const another = await payable()
      expect((await pay(cardPayment(another.order), { url, headers: another.headers })).statusCode, url).toBe(
        201,
      )
    }
  })

  it("when the order's payment step or an admin paid it, then its customer reads the payment (the order's payment link) and a stranger may not", async () => {
    const { order, headers } = await payable()
    const byAdmin = await pay(cardPayment(order), { headers: asAdmin() })
    expect(byAdmin.statusCode).toBe(201)
    const url = byAdmin.headers.location as string
    expect((await payment.app.inject({ method: 'GET', url, headers })).json()).toEqual(byAdmin.json())
    expectErrorEnvelope(await payment.app.inject({ method: 'GET', url, headers: bearer() }), 403, 'FORBIDDEN')

    const charged = placedOrder({ token: await providerToken(provider.url, cards.succeeds) })
    const step = await handleOrderPlaced(payment, charged)
    if (step.outcome !== 'processed') throw new Error(`the order step answered ${step.outcome}`)
    const stepUrl = `/api/v1/payments/${step.paymentId}`
    const read = await payment.app.inject({
      method: 'GET',
      url: stepUrl,
      headers: bearer(charged.customerId),
    })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toMatchObject({
      paymentId: step.paymentId,
      orderId: charged.orderId,
      status: 'succeeded',
    })
    expectErrorEnvelope(
      await payment.app.inject({ method: 'GET', url: stepUrl, headers: bearer() }),
      403,
      'FORBIDDEN',
    )
  })

  it('when a provider token pays, then 201 with the brand and last four the provider knows', async () => {
    const { order, headers } = await payable()
    const token = await providerToken(provider.url, cards.succeeds)
    const answer = await pay({ orderId: order.orderId, amount: order.total, source: { token } }, { headers })
    expect(answer.statusCode).toBe(201)
    expect(answer.json()).toMatchObject({ status: 'succeeded', amount: 19.99, brand: 'visa', last4: '4242' })
  })

  it('when the Idempotency-Key header is missing, then 400 and nothing is charged', async () => {
    const { order, headers } = await payable()
    const body = cardPayment(order)
    expectErrorEnvelope(await pay(body, { key: null, headers }), 400, 'BAD_REQUEST')
    expectErrorEnvelope(await pay(body, { key: '', headers }), 400, 'BAD_REQUEST')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 0, failedCharges: 0 })
  })

  it('when there are no credentials, then 401 before anything else', async () => {
    const { order } = await payable()
    expectErrorEnvelope(await pay(cardPayment(order), { headers: {} }), 401, 'UNAUTHORIZED')
  })

  it('when the same key comes again with the same body, then the stored answer is replayed and the card is charged once', async () => {
    const { order, headers } = await payable()
    const key = randomUUID()
    const body = cardPayment(order)
    const first = await pay(body, { key, headers })
    expect(first.statusCode).toBe(201)
    const again = await pay(body, { key, headers })
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(again.headers.location).toBe(first.headers.location)
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, charged: 1999 })
    const [counted] = await payment.sql<
      { count: number }[]
    >`select count(*)::int from payments where order_id = ${order.orderId}`
    expect(counted?.count).toBe(1)
  })

  it('when a card pays under a key, then only an HMAC under IDEMPOTENCY_SECRET is kept: the row alone does not give it, and a row kept from before still replays', async () => {
    const { order, headers } = await payable()
    const key = randomUUID()
    const body = cardPayment(order)
    const first = await pay(body, { key, headers })
    expect(first.statusCode).toBe(201)
    const [row] = await payment.sql<{ requestHash: string; scope: string }[]>`
      select request_hash, scope from idempotency_keys where key = ${key}`
    expect(row?.scope).toBe(order.customerId)
    // a252e60 keyed it by 'meridian-payment', the scope and the key, all in the row: with a copy of the table, a
    // guessed card number (its brand and last four stored beside) could be checked offline
    const fromTheRow = legacyRequestFingerprint('meridian-payment', row?.scope ?? '', key, body)
    expect(row?.requestHash).toMatch(/^v2:[0-9a-f]{64}$/)
    expect(row?.requestHash).not.toContain(fromTheRow)
    expect(JSON.stringify(row)).not.toContain(cards.succeeds)

    // a key stored before the secret (its legacy fingerprint) is matched the old way until it expires
    await payment.sql`update idempotency_keys set request_hash = ${fromTheRow} where key = ${key}`
    const again = await pay(body, { key, headers })
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expectErrorEnvelope(await pay({ ...body, amount: 20 }, { key, headers }), 422, 'VALIDATION_ERROR')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, charged: 1999 })
  })

  it('when the same key comes with another body, then 422 and nothing more is charged', async () => {
    const { order, headers } = await payable()
    const key = randomUUID()
    const body = cardPayment(order)
    expect((await pay(body, { key, headers })).statusCode).toBe(201)
    const other = await pay({ ...body, amount: 20 }, { key, headers })
    expectErrorEnvelope(other, 422, 'VALIDATION_ERROR')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, charged: 1999 })
  })

  it('when two requests with one key arrive at once, then one runs (201) and the other is 409; the card is charged once', async () => {
    const { order, headers } = await payable()
    const key = randomUUID()
    const body = cardPayment(order, cards.delayed)
    const answers = await Promise.all([pay(body, { key, headers }), pay(body, { key, headers })])
    const statuses = answers.map((answer) => answer.statusCode).sort()
    expect(statuses).toEqual([201, 409])
    const conflict = answers.find((answer) => answer.statusCode === 409)
    if (!conflict) throw new Error('no 409')
    expectErrorEnvelope(conflict, 409, 'CONFLICT')
    // once the first is done, the key replays its answer
    const later = await pay(body, { key, headers })
    expect(later.statusCode).toBe(201)
    expect(later.headers['idempotent-replayed']).toBe('true')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1 })
  })

  it('when another caller uses the same key for their own order, then it is a payment of its own', async () => {
    const key = randomUUID()
    const mine = await payable()
    const theirs = await payable()
    const first = await pay(cardPayment(mine.order), { key, headers: mine.headers })
    const second = await pay(cardPayment(theirs.order), { key, headers: theirs.headers })
    expect([first.statusCode, second.statusCode]).toEqual([201, 201])
    expect(second.headers['idempotent-replayed']).toBeUndefined()
    expect(second.json().paymentId).not.toBe(first.json().paymentId)
    expect(await orderSummary(provider.url, theirs.order.orderId)).toMatchObject({ charges: 1 })
  })

  it('when the provider refuses the payment method (a card number failing its check, an unknown token), then 422 naming the field, nothing charged', async () => {
    const { order, headers } = await payable()
    const badNumber = await pay(cardPayment(order, '4242424242424241'), { headers })
    const cardError = expectErrorEnvelope(badNumber, 422, 'VALIDATION_ERROR')
    expect(cardError.details).toEqual([expect.objectContaining({ field: 'source.card.number' })])
    const unknownToken = await pay(
      {
        orderId: order.orderId,
        amount: order.total,
        currency: 'usd',
        source: { token: 'tok_nobody_made_this' },
      },
      { headers },
    )
    const tokenError = expectErrorEnvelope(unknownToken, 422, 'VALIDATION_ERROR')
    expect(tokenError.details).toEqual([expect.objectContaining({ field: 'source.token' })])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 0 })
  })

  it("when the card is declined, then 402 PAYMENT_SERVICE_ERROR with the provider's message, stored and replayed; the order still awaits a payment", async () => {
    const { order, headers } = await payable()
    const key = randomUUID()
    const body = cardPayment(order, cards.declined)
    const declined = await pay(body, { key, headers })
    const error = expectErrorEnvelope(declined, 402, 'PAYMENT_SERVICE_ERROR')
    expect(error.message).toBe('Your card was declined.')
    const [row] = await payment.sql`
      select status, failure_reason, last4 from payments where order_id = ${order.orderId} and payer_id is not null`
    expect(row).toEqual({ status: 'failed', failureReason: 'Your card was declined.', last4: '0002' })

    const again = await pay(body, { key, headers })
    expectErrorEnvelope(again, 402, 'PAYMENT_SERVICE_ERROR')
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 0, failedCharges: 1 })
    // another card pays it
    expect((await pay(cardPayment(order), { headers })).statusCode).toBe(201)
  })

  it('when the provider rate-limits, then 429 RATE_LIMITED with retryAfter 30', async () => {
    const { order, headers } = await payable()
    const answer = await pay(cardPayment(order, cards.rateLimited), { headers })
    const error = expectErrorEnvelope(answer, 429, 'RATE_LIMITED')
    expect(error.retryAfter).toBe(30)
    expect(answer.headers['retry-after']).toBe('30')
  })

  it('when the provider fails, then 502 PAYMENT_SERVICE_ERROR, not stored: the same key runs again, and another card may pay the order', async () => {
    const { order, headers } = await payable()
    const key = randomUUID()
    const body = cardPayment(order, cards.providerError)
    const before = provider.stats().providerErrors
    expectErrorEnvelope(await pay(body, { key, headers }), 502, 'PAYMENT_SERVICE_ERROR')
    const again = await pay(body, { key, headers })
    expectErrorEnvelope(again, 502, 'PAYMENT_SERVICE_ERROR')
    expect(again.headers['idempotent-replayed']).toBeUndefined()
    expect(provider.stats().providerErrors).toBe(before + 2)
    // the provider charged nothing: the failed attempt does not hold the order up
    expect((await pay(cardPayment(order), { headers })).statusCode).toBe(201)
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1 })
  })

  it('when the logs are read, then no card number is in them', async () => {
    const numbers = Object.values(cards)
    const logged = JSON.stringify(payment.logs)
    expect(payment.logs.length).toBeGreaterThan(0)
    for (const number of numbers) expect(logged).not.toContain(number)
    const [counted] = await payment.sql<{ count: number }[]>`
      select count(*)::int from payments where last4 is not null and char_length(last4) <> 4`
    expect(counted?.count).toBe(0)
  })
})

describe('POST /payments when the provider cannot answer', () => {
  it('when the provider is down, then 503 SERVICE_UNAVAILABLE, nothing is stored for the key, and it runs again', async () => {
    const down = await buildPaymentTestApp({
      ...tokenEnv,
      STRIPE_API_BASE: `http://127.0.0.1:${await closedPort()}`,
    })
    try {
      const { order, headers } = await payable(down)
      const key = randomUUID()
      const body = cardPayment(order)
      expectErrorEnvelope(await pay(body, { key, headers, app: down }), 503, 'SERVICE_UNAVAILABLE')
      const rows = await down.sql`select status, response_status from idempotency_keys`
      expect(rows).toEqual([{ status: 'released', responseStatus: null }])
      const again = await pay(body, { key, headers, app: down })
      expectErrorEnvelope(again, 503, 'SERVICE_UNAVAILABLE')
      expect(again.headers['idempotent-replayed']).toBeUndefined()
    } finally {
      await down.close()
    }
  })

  it('when the provider does not answer in time, then 503; another key is 409 meanwhile; a retry with the key after it charged gets that charge, once, and the order moves on', async () => {
    const slow = await buildPaymentTestApp({
      ...tokenEnv,
      STRIPE_API_BASE: provider.url,
      PAYMENT_PROVIDER_TIMEOUT_MS: '1000',
      // the reconciler stays out of the way: the retry settles the charge
      PAYMENT_RECONCILE_INTERVAL_MS: '3600000',
    })
    try {
      const { order, headers } = await payable(slow)
      const key = randomUUID()
      const token = await providerToken(provider.url, cards.hangs)
      const body = { orderId: order.orderId, amount: order.total, source: { token } }
      // the provider (in this process) would answer 201 at its hang's end, 2500 ms after it took the call: the 503 is
      // the adapter's own 1000 ms, armed before the call left, ending first
      expectErrorEnvelope(await pay(body, { key, headers, app: slow }), 503, 'SERVICE_UNAVAILABLE')

      // its outcome is unknown: another payment of the order is refused rather than made beside it
      const other = await pay(cardPayment(order), { headers, app: slow })
      expectErrorEnvelope(other, 409, 'CONFLICT')

      // the provider charges after its hang all the same; the retry reaches it with the same provider key
      await eventually(
        'the provider charges after its hang',
        async () => (await orderSummary(provider.url, order.orderId)).charges === 1,
      )
      const retried = await pay(body, { key, headers, app: slow })
      expect(retried.statusCode).toBe(201)
      expect(retried.json()).toMatchObject({ orderId: order.orderId, status: 'succeeded', amount: 19.99 })
      expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, charged: 1999 })
      const events = await slow.sql<{ eventType: string; payload: { data: { paymentId?: string } } }[]>`
        select event_type, payload from outbox where aggregate_id = ${order.orderId} order by id`
      expect(events.map((event) => event.eventType)).toEqual(['payment.failed', 'payment.processed'])
      expect(events[1]?.payload.data.paymentId).toBe(retried.json().paymentId)
    } finally {
      await slow.close()
    }
  })
})
