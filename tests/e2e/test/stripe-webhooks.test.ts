// The provider's webhooks through the gateway, on raw HTTP (fetch to the gateway's port), against the suite's running
// system, whose simulator delivers its own events to payment through the gateway with payment's secret: the charge of
// a paid order reaches payment as payment_intent.succeeded; a refund made at the provider outside Meridian arrives as
// charge.refunded and moves the payment once, its event sent again included. Deliveries signed with the SDK's test
// helper: a wrong signature, a stale timestamp and a body changed by one byte are 400 in the envelope and change
// nothing; a good one is 200 and moves the payment, sent again 200 and applied once; a body over 1 MB is 413.
import { randomBytes } from 'node:crypto'
import type { Payment } from '@meridian/contracts'
import { createDatabase, type Sql } from '@meridian/db'
import { kafkaClientOfEnv } from '@meridian/infra'
import { developmentWebhookSecret, paymentWebhookPath } from '@meridian/infra/system'
import { eventually, scaledMs } from '@meridian/testkit'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, type Customer, cards, e2eClient } from '../src/client.ts'
import '../src/system-context.ts'

const system = inject('system')
const client = e2eClient(system)
const patience = scaledMs(60_000)
/** the secret the run's payment checks deliveries with (its development default, as the simulator was given) */
const secret = process.env.STRIPE_WEBHOOK_SECRET || developmentWebhookSecret
const webhookUrl = `${system.gatewayUrl}${paymentWebhookPath}`

let sql: Sql
let admin: Caller
let customer: Customer
/** a paid order: its payment and the PaymentIntent it was charged as */
let paid: { orderId: string; paymentId: string; intent: string }
/** the provider's API, as its dashboard uses it */
let stripe: Stripe

beforeAll(async () => {
  const databaseUrl = system.services.payment?.databaseUrl
  if (!databaseUrl) throw new Error("the run's payment has no database")
  sql = createDatabase(databaseUrl, { max: 2, applicationName: 'e2e-stripe-webhooks' })
  const simulator = new URL(system.simulatorUrl)
  stripe = new Stripe('sk_test_meridian', {
    host: simulator.hostname,
    port: Number(simulator.port),
    protocol: 'http',
    maxNetworkRetries: 0,
  })
  admin = await client.loginAdmin()
  customer = await client.registerCustomer()
  const product = await client.createProduct(admin, { stock: 5 })
  const orderId = await client.placeOrderOk(customer, { product, quantity: 2, card: cards.good })
  const order = await client.orderReaches(customer, orderId, ['paid', 'reserved', 'shipped'], patience)
  const paymentId = order._links.payment?.href.split('/').pop() ?? ''
  const [row] = await sql<{ providerChargeId: string }[]>`
    select provider_charge_id from payments where id = ${paymentId}`
  if (!row) throw new Error(`no payment ${paymentId} of order ${orderId}`)
  paid = { orderId, paymentId, intent: row.providerChargeId }
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
})

/** POSTs `body` to the webhook endpoint through the gateway with `signature` (none when null). */
async function post(body: string, signature: string | null) {
  const response = await fetch(webhookUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(signature === null ? {} : { 'stripe-signature': signature }),
    },
    body,
    signal: AbortSignal.timeout(30_000),
  })
  const text = await response.text()
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> }
}

const sign = (payload: string, options: { secret?: string; timestamp?: number } = {}) =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? secret, ...options })

/** A dispute of the paid order's charge, as the provider sends charge.dispute.created (ids of its own). */
function disputeEvent() {
  const id = randomBytes(12).toString('hex')
  return {
    id: `evt_e2e${id}`,
    object: 'event',
    api_version: '2026-08-26.dahlia',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    type: 'charge.dispute.created',
    request: { id: null, idempotency_key: null },
    data: {
      object: {
        id: `dp_e2e${id}`,
        object: 'dispute',
        amount: 100,
        charge: `ch_e2e${id}`,
        currency: 'usd',
        payment_intent: paid.intent,
        reason: 'fraudulent',
        status: 'needs_response',
      },
    },
  }
}

const recorded = (eventId: string) =>
  sql<{ type: string; outcome: string }[]>`
    select type, outcome from provider_events where event_id = ${eventId}`

/**
 * The events of `type` about the paid order on the run's topic (keyed by the order), as a consumer reads them: read
 * from the beginning, waited for until `count` are there (then a moment longer, so that one more would show).
 */
async function publishedOf(type: string, count: number): Promise<Record<string, unknown>[]> {
  const { namespace } = system.kafka
  const consumer = kafkaClientOfEnv(system.kafka.env, 'e2e-stripe-webhooks').consumer({
    groupId: `e2e-stripe-webhooks-${randomBytes(6).toString('hex')}`,
  })
  const found: Record<string, unknown>[] = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topic: `${namespace}${type}`, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.key?.toString() !== paid.orderId || !message.value) return
        found.push((JSON.parse(message.value.toString()) as { data: Record<string, unknown> }).data)
      },
    })
    await eventually(`${count} ${type} of the order on its topic`, () => found.length >= count, patience)
    await new Promise((resolve) => setTimeout(resolve, 1000))
  } finally {
    await consumer.disconnect()
  }
  return found
}
const readPayment = async () =>
  (
    await client.request<Payment>('GET', `/api/v1/payments/${paid.paymentId}`, {
      token: customer.token,
    })
  ).body

describe("the provider's webhooks through the gateway", () => {
  it("when an order is charged, then the simulator's payment_intent.succeeded reaches payment through the gateway and is recorded", async () => {
    await eventually(
      "the charge's payment_intent.succeeded is recorded",
      async () =>
        (
          await sql`
            select 1 from provider_events
            where type = 'payment_intent.succeeded' and payment_intent = ${paid.intent}`
        ).length === 1,
      patience,
    )
    expect(system.simulatorUrl).toBeTruthy()
    const stats = (await (await fetch(`${system.simulatorUrl}/v1/stats`)).json()) as {
      webhooksDelivered: number
    }
    expect(stats.webhooksDelivered).toBeGreaterThan(0)
  })

  it('when a delivery is signed with another secret, is older than 300 s or its body changed by one byte, then 400 in the envelope and nothing changes', async () => {
    const event = disputeEvent()
    const body = JSON.stringify(event)
    const changed = body.replace('"amount":100', '"amount":900')
    expect(changed).not.toBe(body)
    for (const [what, answer] of [
      ['another secret', await post(body, sign(body, { secret: 'whsec_of_someone_else_0001' }))],
      ['301 s old', await post(body, sign(body, { timestamp: Math.floor(Date.now() / 1000) - 301 }))],
      ['one byte changed', await post(changed, sign(body))],
      ['unsigned', await post(body, null)],
    ] as const) {
      expect(answer.status, what).toBe(400)
      expect(answer.body, what).toMatchObject({
        success: false,
        error: { code: 'BAD_REQUEST', message: expect.stringMatching(/signature/) },
      })
    }
    expect(await recorded(event.id)).toEqual([])
    expect(await readPayment()).not.toHaveProperty('disputedAt')
    expect(
      await sql`select 1 from outbox where aggregate_id = ${paid.orderId} and event_type = 'payment.disputed'`,
    ).toEqual([])
  })

  it('when a good delivery comes, then 200 and the payment moves; the same event again is 200 and applied once', async () => {
    const event = disputeEvent()
    const body = JSON.stringify(event)
    for (const attempt of [1, 2]) {
      const answer = await post(body, sign(body))
      expect(answer.status, `delivery ${attempt}`).toBe(200)
      expect(answer.body).toEqual({ received: true })
    }
    expect(await recorded(event.id)).toEqual([{ type: 'charge.dispute.created', outcome: 'disputed' }])
    expect(await readPayment()).toMatchObject({ status: 'succeeded', disputedAt: expect.any(String) })
    expect(await publishedOf('payment.disputed', 1)).toEqual([
      {
        orderId: paid.orderId,
        paymentId: paid.paymentId,
        disputeId: event.data.object.id,
        amount: 1,
        reason: 'fraudulent',
      },
    ])
  })

  it("when the provider's dashboard refunds part of the charge, then its charge.refunded reaches payment and the payment's refunded amount follows, once even when the event is sent again", async () => {
    await stripe.refunds.create({ payment_intent: paid.intent, amount: 150 })
    await eventually(
      "the payment's refunded amount is the provider's",
      async () => (await readPayment()).refundedAmount === 1.5,
      patience,
    )
    const refunds = await stripe.events.list({ type: 'charge.refunded', limit: 100 })
    const event = refunds.data.find(
      (each) => (each.data.object as { payment_intent?: string }).payment_intent === paid.intent,
    )
    if (!event) throw new Error('the simulator holds no charge.refunded of the charge')
    const body = JSON.stringify(event)
    expect((await post(body, sign(body))).status).toBe(200)
    expect(await recorded(event.id)).toEqual([
      { type: 'charge.refunded', outcome: 'refunded at the provider: 150 cents added' },
    ])
    expect(await readPayment()).toMatchObject({ status: 'succeeded', refundedAmount: 1.5 })
    expect(await publishedOf('payment.refunded.v2', 1)).toEqual([
      {
        orderId: paid.orderId,
        paymentId: paid.paymentId,
        amount: 1.5,
        refundedTotal: 1.5,
        cause: 'provider',
        reason: 'refunded at the payment provider',
      },
    ])
    // the order saga took it for nothing of its own: the order stays as it was
    expect((await client.readOrder(customer, paid.orderId)).status).not.toMatch(/cancel|fail|refund/)
  })

  it('when a body is over the 1 MB limit, then 413 in the envelope (not 503) and nothing is kept', async () => {
    const event = { ...disputeEvent(), padding: 'x'.repeat(1024 * 1024) }
    const body = JSON.stringify(event)
    const answer = await post(body, sign(body))
    expect(answer.status).toBe(413)
    expect(answer.body).toMatchObject({ success: false, error: { code: 'PAYLOAD_TOO_LARGE' } })
    expect(await recorded(event.id)).toEqual([])
  })
})
