// The provider's webhooks on raw HTTP: a delivery signed with the webhook secret is applied once and answered 200; a
// wrong signature, a stale timestamp, a body changed by one byte or no signature at all is a 400 in the envelope and
// changes nothing; the same event delivered again is acknowledged and applied once; an unknown type is acknowledged
// and kept. A charge whose answer was lost (the hang card, past the adapter's timeout) is settled by its
// payment_intent.succeeded before any reconciler round, and the round finds nothing left to do. Real PostgreSQL and
// the simulator (which signs as Stripe does); the signatures here are made with the SDK's own test helper.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { eventually, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { cards, orderSummary, providerToken } from './support/provider.ts'
import { providerEvent } from './support/provider-events.ts'

const secret = 'whsec_webhook_test_secret_0001'
/** the hang card answers (and charges) this long after the call: past the adapter's timeout below */
const hangMs = 2500

let provider: PaymentSimulator
let payment: PaymentTestApp

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0, hangMs })
  payment = await buildPaymentTestApp({
    ...tokenEnv,
    STRIPE_API_BASE: provider.url,
    STRIPE_WEBHOOK_SECRET: secret,
    PAYMENT_PROVIDER_TIMEOUT_MS: '1000',
    // the clock stays out of the way: the tests run a round themselves
    PAYMENT_RECONCILE_INTERVAL_MS: '3600000',
    PAYMENT_RECONCILE_AFTER_MS: '0',
  })
})

afterAll(async () => {
  await payment?.close()
  await provider?.close()
})

const path = '/api/v1/payments/webhooks/stripe'

const eventOf = (type: string, object: Record<string, unknown>, idempotencyKey?: string) =>
  providerEvent(type, object, { idempotencyKey: idempotencyKey ?? null })

/** POSTs `body` as the provider would, signed with `signWith` at `timestamp` (seconds) unless a header is given. */
function deliver(
  body: string,
  options: { signWith?: string; timestamp?: number; header?: string | null } = {},
) {
  const header =
    options.header === undefined
      ? Stripe.webhooks.generateTestHeaderString({
          payload: body,
          secret: options.signWith ?? secret,
          ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
        })
      : options.header
  return payment.app.inject({
    method: 'POST',
    url: path,
    headers: {
      'content-type': 'application/json',
      ...(header === null ? {} : { 'stripe-signature': header }),
    },
    payload: body,
  })
}

const recorded = (eventId: string) =>
  payment.sql<
    { type: string; outcome: string }[]
  >`select type, outcome from provider_events where event_id = ${eventId}`

describe("the provider's webhooks", () => {
  it('when a delivery is signed with another secret, stale, changed by one byte or unsigned, then 400 in the envelope and nothing is kept', async () => {
    const event = eventOf('payment_intent.succeeded', { id: 'pi_refused', object: 'payment_intent' })
    const body = JSON.stringify(event)
    const now = Math.floor(Date.now() / 1000)
    const changed = deliver(body.replace('pi_refused', 'pi_refusee'), {
      header: Stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
    })
    for (const answer of await Promise.all([
      deliver(body, { signWith: 'whsec_another_secret_of_someone' }),
      deliver(body, { timestamp: now - 301 }),
      changed,
      deliver(body, { header: null }),
      deliver(body, { header: 't=1,v1=00' }),
    ])) {
      expectErrorEnvelope(answer, 400, 'BAD_REQUEST')
      expect(answer.json().error.message).toMatch(/signature/)
    }
    expect(await recorded(event.id)).toEqual([])
  })

  it('when an event is delivered twice, then it is acknowledged both times and kept once; an unknown type is acknowledged too', async () => {
    const event = eventOf('customer.created', { id: 'cus_1', object: 'customer' })
    const body = JSON.stringify(event)
    for (const attempt of [1, 2]) {
      const answer = await deliver(body)
      expect(answer.statusCode, `delivery ${attempt}`).toBe(200)
      expect(answer.json()).toEqual({ received: true })
    }
    expect(await recorded(event.id)).toEqual([{ type: 'customer.created', outcome: 'recorded' }])
  })

  it("when a charge's answer was lost and its payment_intent.succeeded arrives, then the charge is settled before any round, once, and the round finds nothing left", async () => {
    const orderId = randomUUID()
    const data = {
      orderId,
      customerId: randomUUID(),
      total: 25,
      items: [{ productId: randomUUID(), quantity: 1, price: 25 }],
      customerEmail: 'buyer@example.com',
      payment: { token: await providerToken(provider.url, cards.hangs) },
    }
    // the adapter gives up after 1 s (503: the event is retried); the provider charges at 2.5 s
    await expect(
      transaction(payment.sql, (tx) => payment.payments.chargeOrder(data, tx)),
    ).rejects.toMatchObject({
      statusCode: 503,
    })
    const [attempt] = await payment.sql<{ status: string; idempotencyKey: string }[]>`
      select status, idempotency_key from charge_attempts where order_id = ${orderId}`
    expect(attempt?.status).toBe('pending')
    await eventually(
      "the provider's first call charged",
      async () => (await orderSummary(provider.url, orderId)).charges === 1,
    )

    const event = eventOf(
      'payment_intent.succeeded',
      { id: 'pi_from_the_provider', object: 'payment_intent', metadata: { orderId } },
      attempt?.idempotencyKey,
    )
    const body = JSON.stringify(event)
    expect((await deliver(body)).statusCode).toBe(200)
    expect(await recorded(event.id)).toEqual([
      { type: 'payment_intent.succeeded', outcome: 'settled: processed' },
    ])
    const events = await payment.sql<{ eventType: string }[]>`
      select event_type from outbox where aggregate_id = ${orderId} order by id`
    expect(events.map((row) => row.eventType)).toEqual(['payment.processed'])

    // again, and a round: nothing more
    expect((await deliver(body)).statusCode).toBe(200)
    const round = await payment.reconciler.reconcile({ olderThanMs: 0 })
    expect(round.filter((each) => each.orderId === orderId)).toEqual([])
    expect(await orderSummary(provider.url, orderId)).toMatchObject({ charges: 1, refunds: 0 })
    const outbox = await payment.sql`select 1 from outbox where aggregate_id = ${orderId}`
    expect(outbox).toHaveLength(1)
  })
})
