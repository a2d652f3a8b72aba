// POST /payments under an Idempotency-Key and GET /api/v1/payments/:id, on a real database against infra's payment
// provider simulator: one charge per key, replays, conflicts, per-caller keys, the provider's failures as the
// spec's errors (rule 5), and card numbers that never reach the logs.
import { randomUUID } from 'node:crypto'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { accessToken, asAdmin, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { card, cards, closedPort, orderSummary, providerToken } from './support/provider.ts'

let provider: PaymentSimulator
let payment: PaymentTestApp

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0, delayMs: 1000, hangMs: 2500 })
  payment = await buildPaymentTestApp({ ...tokenEnv, PAYMENT_PROVIDER_URL: provider.url })
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
  headers?: Record<string, string>
  url?: string
  app?: PaymentTestApp
}

function pay(
  body: Record<string, unknown>,
  { key = randomUUID(), headers = bearer(), url, app }: PayOptions = {},
) {
  return (app ?? payment).app.inject({
    method: 'POST',
    url: url ?? '/api/v1/payments',
    headers: { ...headers, ...(key === null ? {} : { 'idempotency-key': key }) },
    payload: body,
  })
}

const cardPayment = (number: string = cards.succeeds, orderId: string = randomUUID(), amount = 19.99) => ({
  orderId,
  amount,
  currency: 'usd',
  source: { card: card(number) },
})

describe('POST /payments', () => {
  it('when a card pays an order, then 201 with the payment (brand and last four only) and its Location', async () => {
    const body = cardPayment()
    const answer = await pay(body)
    expect(answer.statusCode).toBe(201)
    const created = answer.json()
    expect(created).toEqual({
      paymentId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      orderId: body.orderId,
      status: 'succeeded',
      amount: 19.99,
      brand: 'visa',
      last4: '4242',
    })
    expect(answer.headers.location).toBe(`/api/v1/payments/${created.paymentId}`)
    expect(answer.headers['idempotent-replayed']).toBeUndefined()
    expect(await orderSummary(provider.url, body.orderId)).toMatchObject({ charges: 1, charged: 1999 })
    const [row] = await payment.sql`
      select amount_cents::int, status, brand, last4, payer_id from payments where id = ${created.paymentId}`
    expect(row).toMatchObject({ amountCents: 1999, status: 'succeeded', brand: 'visa', last4: '4242' })

    // readable at the Location by its payer (the bare /payments and /api aliases answer too)
    const paid = await pay(cardPayment(), { headers: bearer('payer-1') })
    const location = paid.headers.location as string
    const read = await payment.app.inject({ method: 'GET', url: location, headers: bearer('payer-1') })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toEqual(paid.json())
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
    for (const url of ['/payments', '/api/payments']) {
      expect((await pay(cardPayment(), { url })).statusCode, url).toBe(201)
    }
  })

  it('when a provider token pays, then 201 with the brand and last four the provider knows', async () => {
    const token = await providerToken(provider.url, cards.succeeds)
    const answer = await pay({ orderId: randomUUID(), amount: 5, source: { token } })
    expect(answer.statusCode).toBe(201)
    expect(answer.json()).toMatchObject({ status: 'succeeded', amount: 5, brand: 'visa', last4: '4242' })
  })

  it('when the Idempotency-Key header is missing, then 400 and nothing is charged', async () => {
    const body = cardPayment()
    expectErrorEnvelope(await pay(body, { key: null }), 400, 'BAD_REQUEST')
    expectErrorEnvelope(await pay(body, { key: '' }), 400, 'BAD_REQUEST')
    expect(await orderSummary(provider.url, body.orderId)).toMatchObject({ charges: 0, failedCharges: 0 })
  })

  it('when there are no credentials, then 401 before anything else', async () => {
    expectErrorEnvelope(await pay(cardPayment(), { headers: {} }), 401, 'UNAUTHORIZED')
  })

  it('when the same key comes again with the same body, then the stored answer is replayed and the card is charged once', async () => {
    const key = randomUUID()
    const headers = bearer()
    const body = cardPayment()
    const first = await pay(body, { key, headers })
    expect(first.statusCode).toBe(201)
    const again = await pay(body, { key, headers })
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(again.headers.location).toBe(first.headers.location)
    expect(await orderSummary(provider.url, body.orderId)).toMatchObject({ charges: 1, charged: 1999 })
    const [counted] = await payment.sql<
      { count: number }[]
    >`select count(*)::int from payments where order_id = ${body.orderId}`
    expect(counted?.count).toBe(1)
  })

  it('when the same key comes with another body, then 422 and nothing more is charged', async () => {
    const key = randomUUID()
    const headers = bearer()
    const body = cardPayment()
    expect((await pay(body, { key, headers })).statusCode).toBe(201)
    const other = await pay({ ...body, amount: 20 }, { key, headers })
    expectErrorEnvelope(other, 422, 'VALIDATION_ERROR')
    expect(await orderSummary(provider.url, body.orderId)).toMatchObject({ charges: 1, charged: 1999 })
  })

  it('when two requests with one key arrive at once, then one runs (201) and the other is 409; the card is charged once', async () => {
    const key = randomUUID()
    const headers = bearer()
    const body = cardPayment(cards.delayed)
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
    expect(await orderSummary(provider.url, body.orderId)).toMatchObject({ charges: 1 })
  })

  it('when another caller uses the same key, then it is a payment of its own', async () => {
    const key = randomUUID()
    const body = cardPayment()
    const mine = await pay(body, { key, headers: bearer() })
    const theirs = await pay(body, { key, headers: bearer() })
    expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201])
    expect(theirs.headers['idempotent-replayed']).toBeUndefined()
    expect(theirs.json().paymentId).not.toBe(mine.json().paymentId)
    expect(await orderSummary(provider.url, body.orderId)).toMatchObject({ charges: 2 })
  })

  it('when the provider refuses the payment method (a card number failing its check, an unknown token), then 422 naming the field, nothing charged', async () => {
    const orderId = randomUUID()
    const badNumber = await pay(cardPayment('4242424242424241', orderId))
    const cardError = expectErrorEnvelope(badNumber, 422, 'VALIDATION_ERROR')
    expect(cardError.details).toEqual([expect.objectContaining({ field: 'source.card.number' })])
    const unknownToken = await pay({
      orderId,
      amount: 5,
      currency: 'usd',
      source: { token: 'tok_nobody_made_this' },
    })
    const tokenError = expectErrorEnvelope(unknownToken, 422, 'VALIDATION_ERROR')
    expect(tokenError.details).toEqual([expect.objectContaining({ field: 'source.token' })])
    expect(await orderSummary(provider.url, orderId)).toMatchObject({ charges: 0 })
  })

  it("when the card is declined, then 402 PAYMENT_SERVICE_ERROR with the provider's message, stored and replayed", async () => {
    const key = randomUUID()
    const headers = bearer()
    const body = cardPayment(cards.declined)
    const declined = await pay(body, { key, headers })
    const error = expectErrorEnvelope(declined, 402, 'PAYMENT_SERVICE_ERROR')
    expect(error.message).toBe('Your card was declined.')
    const [row] =
      await payment.sql`select status, failure_reason, last4 from payments where order_id = ${body.orderId}`
    expect(row).toEqual({ status: 'failed', failureReason: 'Your card was declined.', last4: '0002' })

    const again = await pay(body, { key, headers })
    expectErrorEnvelope(again, 402, 'PAYMENT_SERVICE_ERROR')
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(await orderSummary(provider.url, body.orderId)).toMatchObject({ charges: 0, failedCharges: 1 })
  })

  it('when the provider rate-limits, then 429 RATE_LIMITED with retryAfter 30', async () => {
    const answer = await pay(cardPayment(cards.rateLimited))
    const error = expectErrorEnvelope(answer, 429, 'RATE_LIMITED')
    expect(error.retryAfter).toBe(30)
    expect(answer.headers['retry-after']).toBe('30')
  })

  it('when the provider fails, then 502 PAYMENT_SERVICE_ERROR, not stored: the same key runs again', async () => {
    const key = randomUUID()
    const headers = bearer()
    const body = cardPayment(cards.providerError)
    const before = provider.stats().providerErrors
    expectErrorEnvelope(await pay(body, { key, headers }), 502, 'PAYMENT_SERVICE_ERROR')
    const again = await pay(body, { key, headers })
    expectErrorEnvelope(again, 502, 'PAYMENT_SERVICE_ERROR')
    expect(again.headers['idempotent-replayed']).toBeUndefined()
    expect(provider.stats().providerErrors).toBe(before + 2)
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
  it('when the provider is down, then 503 SERVICE_UNAVAILABLE, and the key is free again', async () => {
    const down = await buildPaymentTestApp({
      ...tokenEnv,
      PAYMENT_PROVIDER_URL: `http://127.0.0.1:${await closedPort()}`,
    })
    try {
      const key = randomUUID()
      const headers = bearer()
      const body = cardPayment()
      expectErrorEnvelope(await pay(body, { key, headers, app: down }), 503, 'SERVICE_UNAVAILABLE')
      const [counted] = await down.sql<{ count: number }[]>`select count(*)::int from idempotency_keys`
      expect(counted?.count).toBe(0)
      expectErrorEnvelope(await pay(body, { key, headers, app: down }), 503, 'SERVICE_UNAVAILABLE')
    } finally {
      await down.close()
    }
  })

  it('when the provider does not answer in time, then 503; a retry with the key after it charged gets that charge, once', async () => {
    const slow = await buildPaymentTestApp({
      ...tokenEnv,
      PAYMENT_PROVIDER_URL: provider.url,
      PAYMENT_PROVIDER_TIMEOUT_MS: '1000',
    })
    try {
      const key = randomUUID()
      const headers = bearer()
      const token = await providerToken(provider.url, cards.hangs)
      const body = { orderId: randomUUID(), amount: 12.5, source: { token } }
      const startedAt = Date.now()
      expectErrorEnvelope(await pay(body, { key, headers, app: slow }), 503, 'SERVICE_UNAVAILABLE')
      expect(Date.now() - startedAt).toBeLessThan(2400)

      // the provider charges after its hang all the same; the retry reaches it with the same provider key
      await new Promise((resolve) => setTimeout(resolve, 2000))
      expect(await orderSummary(provider.url, body.orderId)).toMatchObject({ charges: 1 })
      const retried = await pay(body, { key, headers, app: slow })
      expect(retried.statusCode).toBe(201)
      expect(retried.json()).toMatchObject({ orderId: body.orderId, status: 'succeeded', amount: 12.5 })
      expect(await orderSummary(provider.url, body.orderId)).toMatchObject({ charges: 1, charged: 1250 })
    } finally {
      await slow.close()
    }
  })
})
