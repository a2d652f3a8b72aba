// The payment simulator's Stripe subset, driven through the official `stripe` SDK as the payment service drives it:
// payment methods, intents (success, manual capture, declines, 3-D Secure by page and by test helper, cancel),
// refunds and the refund faults, idempotency, API keys, bounded input, signed webhooks with retries, events, and the
// order summary. Traffic to 127.0.0.1 only; waits are by condition.
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Stripe from 'stripe'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  createPaymentSimulator,
  defaultIdempotencyTtlMs,
  defaultWebhookRetryDelaysMs,
  optionsFromEnv,
  type PaymentSimulator,
  type PaymentSimulatorOptions,
  stripeApiVersion,
  stripeTestCards,
  testPaymentMethods,
} from '../src/payment-simulator/index.ts'
import { scaledMs } from '../src/test-time.ts'
import { eventually } from './eventually.ts'

const newKey = () => `key-${randomUUID()}`
const newOrder = () => `order-${randomUUID()}`
const returnUrl = 'http://127.0.0.1:9/checkout/done?cart=7'

function client(sim: PaymentSimulator, key = 'sk_test_sim'): Stripe {
  return new Stripe(key, {
    host: '127.0.0.1',
    port: sim.port,
    protocol: 'http',
    maxNetworkRetries: 0,
    telemetry: false,
  })
}

/** The error a call failed with (the test fails if it did not). */
async function failure(call: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  try {
    await call
  } catch (error) {
    if (error instanceof Stripe.errors.StripeError) return error
    throw error
  }
  throw new Error('the call succeeded')
}

const card = (number: string) => ({ number, exp_month: 12, exp_year: 2040, cvc: '123' })

/** A form POST or a GET by hand, with the secret key unless told otherwise. */
async function raw(
  sim: PaymentSimulator,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = { authorization: 'Bearer sk_test_sim' },
) {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body }),
    redirect: 'manual',
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text }
}

interface Delivery {
  body: string
  signature: string
}

/** A local webhook receiver answering each delivery's status by its number (1, 2, ...); 0 never answers. */
async function receiver(answer: (attempt: number) => number = () => 200) {
  const deliveries: Delivery[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      deliveries.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: String(req.headers['stripe-signature']),
      })
      const status = answer(deliveries.length)
      if (status !== 0) res.writeHead(status).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    deliveries,
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

const eventsOf = (deliveries: Delivery[]) =>
  deliveries.map((delivery) => JSON.parse(delivery.body) as Stripe.Event)

/** One simulator for each describe below (reset before every test) and an SDK client of it. */
let sim: PaymentSimulator
let stripe: Stripe
const logLines: string[] = []
const summary = async (orderId: string) =>
  JSON.parse((await raw(sim, 'GET', `/v1/orders/${encodeURIComponent(orderId)}/summary`, undefined, {})).text)
/** A confirmed intent of 10.00 USD with pm_card_visa for a new order, unless told otherwise. */
const pay = (params: Partial<Stripe.PaymentIntentCreateParams>, key?: string) =>
  stripe.paymentIntents.create(
    {
      amount: 1000,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      metadata: { orderId: newOrder() },
      ...params,
    },
    key === undefined ? undefined : { idempotencyKey: key },
  )

function useSimulator(): void {
  beforeAll(async () => {
    sim = await createPaymentSimulator({ port: 0, delayMs: 50, log: (line) => logLines.push(line) })
    stripe = client(sim)
  })
  afterAll(async () => {
    await sim.close()
  })
  beforeEach(() => {
    sim.reset()
    logLines.length = 0
  })
}

describe('Stripe subset: payment methods', () => {
  useSimulator()

  it('when a card becomes a PaymentMethod, then pm_ with brand and last4, and its number is in no answer nor log line', async () => {
    const visa = await stripe.paymentMethods.create({ type: 'card', card: card('4242424242424242') })
    expect(visa).toMatchObject({
      id: expect.stringMatching(/^pm_\w+$/),
      object: 'payment_method',
      type: 'card',
      card: { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2040, funding: 'credit', country: 'US' },
      livemode: false,
      metadata: {},
    })
    expect(typeof visa.created).toBe('number')
    const mastercard = await stripe.paymentMethods.create({ type: 'card', card: card('5555555555554444') })
    expect(mastercard.card).toMatchObject({ brand: 'mastercard', last4: '4444' })
    expect((await stripe.paymentMethods.retrieve(visa.id)).card?.last4).toBe('4242')
    expect(sim.stats().paymentMethods).toBe(2)
    await eventually('the log lines', async () => (logLines.length >= 3 ? true : undefined))
    for (const text of [...logLines, JSON.stringify(visa), JSON.stringify(mastercard)]) {
      expect(text).not.toContain('4242424242424242')
      expect(text).not.toContain('5555555555554444')
      expect(text).not.toContain('sk_test_sim')
    }
  })

  it('when the number fails Luhn, is no number, or the card has expired, then 402 card errors naming the parameter', async () => {
    const cases = [
      [card('4242424242424241'), 'incorrect_number', 'card[number]'],
      [card('4242'), 'invalid_number', 'card[number]'],
      [{ ...card('4242424242424242'), exp_year: 2001 }, 'expired_card', 'card[exp_year]'],
      [{ ...card('4242424242424242'), exp_month: 13 }, 'invalid_expiry_month', 'card[exp_month]'],
      [{ ...card('4242424242424242'), cvc: '12x' }, 'invalid_cvc', 'card[cvc]'],
    ] as const
    for (const [details, code, param] of cases) {
      const error = await failure(stripe.paymentMethods.create({ type: 'card', card: details }))
      expect(error, code).toBeInstanceOf(Stripe.errors.StripeCardError)
      expect(error).toMatchObject({ statusCode: 402, code, param })
      expect(error.message).not.toContain('4242424242424241')
    }
    expect(sim.stats().paymentMethods).toBe(0)
  })

  it('when a browser page posts a card with a publishable key, then CORS lets it; a publishable key is refused elsewhere', async () => {
    const preflight = await fetch(`${sim.url}/v1/payment_methods`, {
      method: 'OPTIONS',
      headers: { origin: 'http://127.0.0.1:8080', 'access-control-request-method': 'POST' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization')
    const body = 'type=card&card[number]=4242424242424242&card[exp_month]=12&card[exp_year]=40&card[cvc]=123'
    const made = await raw(sim, 'POST', '/v1/payment_methods', body, {
      authorization: 'Bearer pk_test_page',
      origin: 'http://127.0.0.1:8080',
    })
    expect(made.status).toBe(200)
    expect(made.headers.get('access-control-allow-origin')).toBe('*')
    expect(JSON.parse(made.text).card).toMatchObject({ last4: '4242', exp_year: 2040 })
    // as Stripe.js sends it: the key among the parameters
    const keyed = await raw(sim, 'POST', '/v1/payment_methods', `${body}&key=pk_test_page`, {})
    expect(keyed.status).toBe(200)
    const elsewhere = await failure(
      client(sim, 'pk_test_page').paymentIntents.create({ amount: 1, currency: 'usd' }),
    )
    expect(elsewhere).toBeInstanceOf(Stripe.errors.StripeAuthenticationError)
  })
})

describe('Stripe subset: payment intents', () => {
  useSimulator()

  it('when an intent is confirmed with pm_card_visa, then succeeded with a ch_ charge as latest_charge (expanded), counted once', async () => {
    const orderId = newOrder()
    const intent = await pay({ amount: 2599, metadata: { orderId }, expand: ['latest_charge'] })
    expect(intent).toMatchObject({
      id: expect.stringMatching(/^pi_\w+$/),
      object: 'payment_intent',
      amount: 2599,
      amount_capturable: 0,
      amount_received: 2599,
      currency: 'usd',
      status: 'succeeded',
      capture_method: 'automatic',
      confirmation_method: 'automatic',
      last_payment_error: null,
      next_action: null,
      metadata: { orderId },
      payment_method: expect.stringMatching(/^pm_/),
      livemode: false,
      canceled_at: null,
      cancellation_reason: null,
    })
    expect(intent.client_secret).toMatch(new RegExp(`^${intent.id}_secret_\\w+$`))
    const charge = intent.latest_charge as Stripe.Charge
    expect(charge).toMatchObject({
      id: expect.stringMatching(/^ch_/),
      object: 'charge',
      amount: 2599,
      amount_captured: 2599,
      captured: true,
      status: 'succeeded',
      payment_intent: intent.id,
      payment_method_details: { type: 'card', card: { brand: 'visa', last4: '4242' } },
    })
    const read = await stripe.paymentIntents.retrieve(intent.id)
    expect(read.latest_charge).toBe(charge.id)
    expect(read.lastResponse.headers['request-id']).toMatch(/^req_/)
    expect(read.lastResponse.headers['stripe-version']).toBe(stripeApiVersion)
    expect(await summary(orderId)).toEqual({
      orderId,
      charges: 1,
      failedCharges: 0,
      refunds: 0,
      charged: 2599,
      refunded: 0,
    })
    expect(sim.stats()).toMatchObject({ charges: 1, charged: 2599 })
  })

  it('when an intent is not confirmed, then requires_payment_method or requires_confirmation, and confirm moves it on', async () => {
    const bare = await stripe.paymentIntents.create({ amount: 500, currency: 'usd' })
    expect(bare.status).toBe('requires_payment_method')
    const missing = await failure(stripe.paymentIntents.confirm(bare.id))
    expect(missing).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' })
    const waiting = await stripe.paymentIntents.create({
      amount: 500,
      currency: 'usd',
      payment_method: 'pm_card_mastercard',
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    })
    expect(waiting).toMatchObject({
      status: 'requires_confirmation',
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    })
    const confirmed = await stripe.paymentIntents.confirm(waiting.id, { expand: ['latest_charge'] })
    expect(confirmed.status).toBe('succeeded')
    expect((confirmed.latest_charge as Stripe.Charge).payment_method_details?.card?.brand).toBe('mastercard')
    const bareConfirmed = await stripe.paymentIntents.confirm(bare.id, { payment_method: 'pm_card_visa' })
    expect(bareConfirmed.status).toBe('succeeded')
    const again = await failure(stripe.paymentIntents.confirm(bare.id))
    expect(again).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(again.code).toBe('payment_intent_unexpected_state')
  })

  it('when capture is manual, then requires_capture, and a partial or whole capture succeeds once and counts what was captured', async () => {
    const orderId = newOrder()
    const partial = await pay({ capture_method: 'manual', metadata: { orderId } })
    expect(partial).toMatchObject({ status: 'requires_capture', amount_capturable: 1000, amount_received: 0 })
    expect(await summary(orderId)).toMatchObject({ charges: 0, charged: 0 })
    const tooMuch = await failure(stripe.paymentIntents.capture(partial.id, { amount_to_capture: 1001 }))
    expect(tooMuch).toMatchObject({ statusCode: 400, code: 'amount_too_large' })
    const captured = await stripe.paymentIntents.capture(partial.id, {
      amount_to_capture: 600,
      expand: ['latest_charge'],
    })
    expect(captured).toMatchObject({ status: 'succeeded', amount_received: 600, amount_capturable: 0 })
    expect(captured.latest_charge).toMatchObject({ captured: true, amount_captured: 600 })
    const whole = await pay({ capture_method: 'manual', amount: 700, metadata: { orderId } })
    expect((await stripe.paymentIntents.capture(whole.id)).amount_received).toBe(700)
    const twice = await failure(stripe.paymentIntents.capture(whole.id))
    expect(twice).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' })
    expect(await summary(orderId)).toMatchObject({ charges: 2, charged: 1300 })
  })

  it('when the card declines, then a StripeCardError with code, decline_code and the intent (requires_payment_method)', async () => {
    const orderId = newOrder()
    const cases = [
      ['pm_card_chargeDeclined', 'generic_decline', 'Your card was declined.'],
      ['pm_card_chargeDeclinedInsufficientFunds', 'insufficient_funds', 'Your card has insufficient funds.'],
    ] as const
    for (const [paymentMethod, declineCode, message] of cases) {
      const error = await failure(pay({ payment_method: paymentMethod, metadata: { orderId } }))
      expect(error).toBeInstanceOf(Stripe.errors.StripeCardError)
      expect(error).toMatchObject({
        statusCode: 402,
        code: 'card_declined',
        decline_code: declineCode,
        message,
      })
      const intent = error.payment_intent!
      expect(intent).toMatchObject({
        status: 'requires_payment_method',
        payment_method: null,
        last_payment_error: { type: 'card_error', code: 'card_declined', decline_code: declineCode },
      })
      expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe('requires_payment_method')
    }
    const method = await stripe.paymentMethods.create({ type: 'card', card: card('4000000000000002') })
    const byNumber = await failure(pay({ payment_method: method.id, metadata: { orderId } }))
    expect(byNumber).toMatchObject({ code: 'card_declined', decline_code: 'generic_decline' })
    expect(await summary(orderId)).toMatchObject({ charges: 0, failedCharges: 3, charged: 0 })
  })

  it('when an intent is cancelled, then canceled with its reason; a final one or an unknown id is refused', async () => {
    const intent = await stripe.paymentIntents.create({
      amount: 900,
      currency: 'usd',
      payment_method: 'pm_card_visa',
    })
    const cancelled = await stripe.paymentIntents.cancel(intent.id, { cancellation_reason: 'abandoned' })
    expect(cancelled).toMatchObject({ status: 'canceled', cancellation_reason: 'abandoned' })
    expect(typeof cancelled.canceled_at).toBe('number')
    const authorised = await pay({ capture_method: 'manual' })
    expect((await stripe.paymentIntents.cancel(authorised.id)).amount_capturable).toBe(0)
    const twice = await failure(stripe.paymentIntents.cancel(intent.id))
    expect(twice).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' })
    expect((twice.payment_intent as Stripe.PaymentIntent).status).toBe('canceled')
    const unknown = await failure(stripe.paymentIntents.retrieve('pi_nope'))
    expect(unknown).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(unknown).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'intent' })
  })
})

describe('Stripe subset: 3-D Secure and the simulator’s own cards', () => {
  useSimulator()

  it('when a 3-D Secure card is confirmed with a return_url, then the page’s confirm form succeeds it and redirects back', async () => {
    const intent = await pay({ payment_method: 'pm_card_authenticationRequired', return_url: returnUrl })
    const pageUrl = `${sim.url}/3ds/${intent.id}`
    expect(intent).toMatchObject({
      status: 'requires_action',
      next_action: { type: 'redirect_to_url', redirect_to_url: { url: pageUrl, return_url: returnUrl } },
    })
    const page = await raw(sim, 'GET', `/3ds/${intent.id}`, undefined, {})
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(page.text).toContain('10.00 USD')
    const action =
      /<form method="post" action="([^"]+)"><input type="hidden" name="outcome" value="confirm">/.exec(
        page.text,
      )?.[1]
    expect(action).toBe(`/3ds/${intent.id}/complete`)
    const done = await raw(sim, 'POST', action!, 'outcome=confirm', {})
    expect(done.status).toBe(303)
    const back = new URL(done.headers.get('location')!)
    expect(`${back.origin}${back.pathname}`).toBe('http://127.0.0.1:9/checkout/done')
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      cart: '7',
      payment_intent: intent.id,
      redirect_status: 'succeeded',
    })
    const after = await stripe.paymentIntents.retrieve(intent.id, { expand: ['latest_charge'] })
    expect(after).toMatchObject({ status: 'succeeded', next_action: null, amount_received: 1000 })
    expect(after.latest_charge).toMatchObject({ status: 'succeeded', captured: true })
    expect((await raw(sim, 'GET', `/3ds/${intent.id}`, undefined, {})).status).toBe(409)
  })

  it('when the page’s refuse form is sent, then requires_payment_method with payment_intent_authentication_failure, redirected as failed', async () => {
    const intent = await pay({ payment_method: 'pm_card_threeDSecure2Required', return_url: returnUrl })
    const refused = await raw(sim, 'POST', `/3ds/${intent.id}/complete`, 'outcome=refuse', {})
    expect(refused.status).toBe(303)
    expect(new URL(refused.headers.get('location')!).searchParams.get('redirect_status')).toBe('failed')
    const after = await stripe.paymentIntents.retrieve(intent.id)
    expect(after).toMatchObject({
      status: 'requires_payment_method',
      payment_method: null,
      last_payment_error: { code: 'payment_intent_authentication_failure' },
    })
    // without a return_url: Stripe.js's next action, and a page that may be closed
    const sdk = await pay({ payment_method: 'pm_card_authenticationRequired' })
    expect(sdk.next_action).toEqual({
      type: 'use_stripe_sdk',
      use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: `${sim.url}/3ds/${sdk.id}` },
    })
    const closed = await raw(sim, 'POST', `/3ds/${sdk.id}/complete`, 'outcome=confirm', {})
    expect(closed.status).toBe(200)
    expect(closed.text).toContain('You may close this page.')
  })

  it('when 3-D Secure is answered by the test helper, or declined off-session, then the intent moves as by the page', async () => {
    const authenticate = (id: string, outcome: string) =>
      stripe.rawRequest('POST', `/v1/test_helpers/payment_intents/${id}/authenticate`, { outcome })
    const manual = await pay({ payment_method: 'pm_card_authenticationRequired', capture_method: 'manual' })
    const confirmed = (await authenticate(manual.id, 'confirm')) as Stripe.PaymentIntent
    expect(confirmed).toMatchObject({ status: 'requires_capture', amount_capturable: 1000 })
    const refusedIntent = await pay({ payment_method: 'pm_card_threeDSecure2Required' })
    const refused = (await authenticate(refusedIntent.id, 'refuse')) as Stripe.PaymentIntent
    expect(refused.last_payment_error?.code).toBe('payment_intent_authentication_failure')
    const notWaiting = await failure(authenticate(refusedIntent.id, 'confirm'))
    expect(notWaiting).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' })
    const noKey = await raw(
      sim,
      'POST',
      `/v1/test_helpers/payment_intents/${manual.id}/authenticate`,
      'outcome=confirm',
      {},
    )
    expect(noKey.status).toBe(401)
    for (const flag of [{ off_session: true }, { error_on_requires_action: true }]) {
      const error = await failure(pay({ payment_method: 'pm_card_authenticationRequired', ...flag }))
      expect(error).toMatchObject({ statusCode: 402, code: 'authentication_required' })
    }
  })

  it('when the simulator’s own cards are used, then 429 rate limit, 500 api_error (not kept for the key) and a slow success', async () => {
    const method = (number: string) => stripe.paymentMethods.create({ type: 'card', card: card(number) })
    const limited = await failure(pay({ payment_method: (await method('4000000000000341')).id }))
    expect(limited).toBeInstanceOf(Stripe.errors.StripeRateLimitError)
    expect(limited.statusCode).toBe(429)
    const key = newKey()
    const failing = (await method('4000000000000119')).id
    const orderId = newOrder()
    const first = await failure(pay({ payment_method: failing, metadata: { orderId } }, key))
    expect(first).toBeInstanceOf(Stripe.errors.StripeAPIError)
    expect(first.statusCode).toBe(500)
    const retried = await failure(pay({ payment_method: failing, metadata: { orderId } }, key))
    expect(retried.headers?.['idempotent-replayed']).toBeUndefined()
    expect((await pay({ payment_method: (await method('4000000000000077')).id })).status).toBe('succeeded')
    expect(sim.stats()).toMatchObject({ providerErrors: 2, failedCharges: 3, charges: 1 })
  })
})

describe('Stripe subset: refunds', () => {
  useSimulator()

  it('when an intent is refunded in part and then the rest, then re_ refunds add up on the charge; more is amount_too_large', async () => {
    const orderId = newOrder()
    const intent = await pay({ metadata: { orderId } })
    const partial = await stripe.refunds.create({
      payment_intent: intent.id,
      amount: 300,
      reason: 'requested_by_customer',
      metadata: { orderId },
    })
    expect(partial).toMatchObject({
      id: expect.stringMatching(/^re_/),
      object: 'refund',
      amount: 300,
      charge: intent.latest_charge,
      payment_intent: intent.id,
      currency: 'usd',
      status: 'succeeded',
      reason: 'requested_by_customer',
      metadata: { orderId },
    })
    const charge = await stripe.charges.retrieve(intent.latest_charge as string)
    expect(charge).toMatchObject({ amount_refunded: 300, refunded: false })
    const tooLarge = await failure(stripe.refunds.create({ payment_intent: intent.id, amount: 701 }))
    expect(tooLarge).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(tooLarge).toMatchObject({ code: 'amount_too_large', param: 'amount' })
    const rest = await stripe.refunds.create({ charge: intent.latest_charge as string })
    expect(rest.amount).toBe(700)
    expect(await stripe.charges.retrieve(charge.id)).toMatchObject({ amount_refunded: 1000, refunded: true })
    const more = await failure(stripe.refunds.create({ payment_intent: intent.id }))
    expect(more.code).toBe('charge_already_refunded')
    expect(await summary(orderId)).toMatchObject({ charges: 1, charged: 1000, refunds: 2, refunded: 1000 })
    const notPaid = await stripe.paymentIntents.create({ amount: 100, currency: 'usd' })
    const notRefundable = await failure(stripe.refunds.create({ payment_intent: notPaid.id }))
    expect(notRefundable).toMatchObject({ statusCode: 400, code: 'charge_not_refundable' })
  })

  it('when refunds are set to decline, then a failed refund (failure_reason declined); set to fail, a 500 a retry with the key runs again', async () => {
    const orderId = newOrder()
    const intent = await pay({ metadata: { orderId } })
    sim.setFaults({ refunds: 'decline' })
    const declined = await stripe.refunds.create({ payment_intent: intent.id, amount: 400 })
    expect(declined).toMatchObject({ status: 'failed', failure_reason: 'declined', amount: 400 })
    expect((await stripe.charges.retrieve(intent.latest_charge as string)).amount_refunded).toBe(0)
    expect(sim.stats()).toMatchObject({ declinedRefunds: 1, refunds: 0, refunded: 0 })
    sim.setFaults({ refunds: 'fail' })
    const key = newKey()
    const failed = await failure(
      stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: key }),
    )
    expect(failed).toBeInstanceOf(Stripe.errors.StripeAPIError)
    expect(failed.statusCode).toBe(500)
    sim.setFaults({ refunds: 'succeed' })
    const made = await stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: key })
    expect(made).toMatchObject({ status: 'succeeded', amount: 1000 })
    expect(made.lastResponse.headers['idempotent-replayed']).toBeUndefined()
    expect(await summary(orderId)).toMatchObject({ refunds: 1, refunded: 1000 })
  })
})

describe('Stripe subset: idempotency', () => {
  useSimulator()

  it('when a key comes again with the same parameters, then the first answer is replayed (Idempotent-Replayed), charged once', async () => {
    const orderId = newOrder()
    const key = newKey()
    const first = await pay({ metadata: { orderId } }, key)
    const again = await pay({ metadata: { orderId } }, key)
    expect(again.id).toBe(first.id)
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true')
    expect(first.lastResponse.headers['idempotent-replayed']).toBeUndefined()
    expect(again.lastResponse.requestId).toMatch(/^req_/)
    expect(again.lastResponse.requestId).not.toBe(first.lastResponse.requestId)
    expect(await summary(orderId)).toMatchObject({ charges: 1, charged: 1000 })
    // a decline is kept and replayed too
    const declineKey = newKey()
    const declining = { payment_method: 'pm_card_chargeDeclined', metadata: { orderId } }
    const declined = await failure(pay(declining, declineKey))
    const replayed = await failure(pay(declining, declineKey))
    expect(replayed).toBeInstanceOf(Stripe.errors.StripeCardError)
    expect(replayed.headers?.['idempotent-replayed']).toBe('true')
    expect(replayed.charge).toBe(declined.charge)
    expect(sim.stats()).toMatchObject({ replays: 2, failedCharges: 1 })
  })

  it('when a key comes with other parameters, then a StripeIdempotencyError; keys are per API key and per path', async () => {
    const key = newKey()
    const orderId = newOrder()
    const first = await pay({ metadata: { orderId } }, key)
    const other = await failure(pay({ metadata: { orderId }, amount: 1001 }, key))
    expect(other).toBeInstanceOf(Stripe.errors.StripeIdempotencyError)
    expect(other.statusCode).toBe(400)
    expect(other.message).toMatch(/same parameters they were first used with/)
    const refund = await stripe.refunds.create({ payment_intent: first.id }, { idempotencyKey: key })
    expect(refund.status).toBe('succeeded')
    const otherKey = await client(sim, 'sk_test_other').paymentIntents.create(
      { amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, metadata: { orderId } },
      { idempotencyKey: key },
    )
    expect(otherKey.id).not.toBe(first.id)
  })

  it('when keys expire (idempotencyTtlMs), then the same key and parameters run again', async () => {
    const short = await createPaymentSimulator({ port: 0, idempotencyTtlMs: 200 })
    try {
      const shortClient = client(short)
      const key = newKey()
      const params = { amount: 100, currency: 'usd', payment_method: 'pm_card_visa', confirm: true }
      const first = await shortClient.paymentIntents.create(params, { idempotencyKey: key })
      const later = await eventually('the key to expire', async () => {
        const again = await shortClient.paymentIntents.create(params, { idempotencyKey: key })
        return again.id === first.id ? undefined : again
      })
      expect(later.lastResponse.headers['idempotent-replayed']).toBeUndefined()
    } finally {
      await short.close()
    }
  })

  it(
    'when a key is used while its first call still runs (the hanging card), then 409 idempotency_key_in_use',
    async () => {
      const slow = await createPaymentSimulator({ port: 0, hangMs: 600_000 })
      const slowClient = client(slow)
      const key = newKey()
      const hanging = (
        await slowClient.paymentMethods.create({ type: 'card', card: card('4000000000000259') })
      ).id
      const params = { amount: 100, currency: 'usd', payment_method: hanging, confirm: true }
      const first = slowClient.paymentIntents
        .create(params, { idempotencyKey: key })
        .catch((error: unknown) => error)
      try {
        // a probe with the key and an unknown parameter: refused as another request's only while the key is held,
        // and otherwise refused before it runs (so it keeps nothing)
        await eventually('the first call running', async () => {
          const probe = await failure(
            slowClient.paymentIntents.create({ ...params, probe: 'x' } as Stripe.PaymentIntentCreateParams, {
              idempotencyKey: key,
            }),
          )
          return probe instanceof Stripe.errors.StripeIdempotencyError ? true : undefined
        })
        const concurrent = await failure(slowClient.paymentIntents.create(params, { idempotencyKey: key }))
        expect(concurrent).toMatchObject({
          statusCode: 409,
          rawType: 'idempotency_error',
          code: 'idempotency_key_in_use',
        })
      } finally {
        await slow.close()
      }
      expect(await first).toBeInstanceOf(Stripe.errors.StripeConnectionError)
    },
    scaledMs(60_000),
  )
})

describe('Stripe subset: API keys and bounded input', () => {
  useSimulator()

  it('when the API key is missing, wrong, or not the configured one, then 401 (a StripeAuthenticationError), the key masked', async () => {
    const none = await raw(sim, 'POST', '/v1/payment_intents', 'amount=100&currency=usd', {})
    expect(none.status).toBe(401)
    expect(none.headers.get('request-id')).toMatch(/^req_/)
    expect(JSON.parse(none.text).error.type).toBe('invalid_request_error')
    const wrong = await failure(client(sim, 'rk_test_abcdefghijklmnop').paymentIntents.retrieve('pi_x'))
    expect(wrong).toBeInstanceOf(Stripe.errors.StripeAuthenticationError)
    expect(wrong.message).toMatch(/^Invalid API Key provided: rk_test_\*+mnop$/)
    const locked = await createPaymentSimulator({ port: 0, secretKey: 'sk_test_only' })
    try {
      const other = await failure(
        client(locked, 'sk_test_other').paymentIntents.create({ amount: 1, currency: 'usd' }),
      )
      expect(other).toBeInstanceOf(Stripe.errors.StripeAuthenticationError)
      expect(other.message).not.toContain('sk_test_other')
      const right = await client(locked, 'sk_test_only').paymentIntents.create({ amount: 1, currency: 'usd' })
      expect(right.status).toBe('requires_payment_method')
    } finally {
      await locked.close()
    }
  })

  it('when a parameter is unknown, missing or malformed, then a StripeInvalidRequestError naming it', async () => {
    const unknown = await failure(pay({ bogus: 'x' } as never))
    expect(unknown).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect(unknown).toMatchObject({
      code: 'parameter_unknown',
      param: 'bogus',
      message: 'Received unknown parameter: bogus',
    })
    const nested = await failure(
      stripe.paymentMethods.create({
        type: 'card',
        card: { ...card('4242424242424242'), color: 'red' } as never,
      }),
    )
    expect(nested).toMatchObject({ code: 'parameter_unknown', param: 'card[color]' })
    const missing = await failure(
      stripe.paymentIntents.create({ currency: 'usd' } as Stripe.PaymentIntentCreateParams),
    )
    expect(missing).toMatchObject({ code: 'parameter_missing', param: 'amount' })
    const notInteger = await failure(pay({ amount: 10.5 }))
    expect(notInteger).toMatchObject({ code: 'parameter_invalid_integer', param: 'amount' })
    const noMethod = await failure(pay({ payment_method: 'pm_nope' }))
    expect(noMethod).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'payment_method' })
    const noIntent = await failure(stripe.refunds.create({ payment_intent: 'pi_nope' }))
    expect(noIntent).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'payment_intent' })
    const badCapture = await failure(pay({ capture_method: 'later' as never }))
    expect(badCapture).toMatchObject({ statusCode: 400, param: 'capture_method' })
    expect(sim.stats().charges).toBe(0)
  })

  it('when a body is over 64 KB, has 200 fields, brackets 5 deep or a value over 5000 characters, then a 400 naming the bound', async () => {
    const cases: [Partial<Stripe.PaymentIntentCreateParams>, string][] = [
      [{ description: 'x'.repeat(100 * 1024) }, 'request_body_too_large'],
      [
        { metadata: Object.fromEntries(Array.from({ length: 200 }, (_, at) => [`k${at}`, 'v'])) },
        'too_many_parameters',
      ],
      [{ metadata: { a: { b: { c: { d: { e: 'deep' } } } } } as never }, 'parameter_nesting_too_deep'],
      [{ description: 'x'.repeat(5001) }, 'parameter_too_long'],
    ]
    for (const [params, code] of cases) {
      const error = await failure(pay(params))
      expect(error, code).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
      expect(error).toMatchObject({ statusCode: 400, code })
    }
    expect(sim.stats().charges).toBe(0)
  })

  it('when parameters come as `expand[]`, `expand[0]` and query strings by hand, then they are read the same', async () => {
    const intent = await pay({})
    for (const query of ['expand[]=latest_charge', 'expand%5B0%5D=latest_charge']) {
      const read = await raw(sim, 'GET', `/v1/payment_intents/${intent.id}?${query}`)
      expect(read.status).toBe(200)
      expect(JSON.parse(read.text).latest_charge.object).toBe('charge')
    }
    const made = await raw(
      sim,
      'POST',
      '/v1/payment_intents',
      'amount=250&currency=usd&payment_method=pm_card_visa&confirm=true&metadata[orderId]=by+hand&expand[]=latest_charge',
    )
    expect(JSON.parse(made.text)).toMatchObject({ status: 'succeeded', metadata: { orderId: 'by hand' } })
    expect((await raw(sim, 'GET', '/v1/nothing')).status).toBe(404)
  })

  it('when the failure rate is 1, then payments and refunds answer 500 api_error, not kept; payment methods still work', async () => {
    const failing = await createPaymentSimulator({ port: 0, failureRate: 1 })
    try {
      const failingClient = client(failing)
      const method = await failingClient.paymentMethods.create({
        type: 'card',
        card: card('4242424242424242'),
      })
      const error = await failure(
        failingClient.paymentIntents.create({
          amount: 100,
          currency: 'usd',
          payment_method: method.id,
          confirm: true,
        }),
      )
      expect(error).toMatchObject({ statusCode: 500, rawType: 'api_error' })
      expect(failing.stats()).toMatchObject({ providerErrors: 1, failedCharges: 1, charges: 0 })
    } finally {
      await failing.close()
    }
  })
})

describe('Stripe subset: the order summary', () => {
  useSimulator()

  it('when one order is paid several times, then its summary counts the money captured, its declines and its refunds', async () => {
    const orderId = newOrder()
    const paid = await pay({ amount: 2500, metadata: { orderId } })
    const authorised = await pay({ amount: 700, capture_method: 'manual', metadata: { orderId } })
    await failure(pay({ payment_method: 'pm_card_chargeDeclined', metadata: { orderId } }))
    await pay({ amount: 1000, metadata: { orderId: newOrder() } })
    expect(await summary(orderId)).toEqual({
      orderId,
      charges: 1,
      failedCharges: 1,
      refunds: 0,
      charged: 2500,
      refunded: 0,
    })
    await stripe.paymentIntents.capture(authorised.id)
    await stripe.refunds.create({ payment_intent: paid.id, amount: 500 })
    expect(await summary(orderId)).toEqual({
      orderId,
      charges: 2,
      failedCharges: 1,
      refunds: 1,
      charged: 3200,
      refunded: 500,
    })
    expect(sim.stats()).toMatchObject({
      charges: 3,
      charged: 4200,
      refunds: 1,
      refunded: 500,
      failedCharges: 1,
    })
  })
})

describe('payment simulator: the Stripe subset’s webhooks', () => {
  const opened: PaymentSimulator[] = []
  const receivers: { close(): Promise<void> }[] = []
  const open = async (options: PaymentSimulatorOptions) => {
    const sim = await createPaymentSimulator({ port: 0, ...options })
    opened.push(sim)
    return sim
  }
  const listen = async (answer?: (attempt: number) => number) => {
    const made = await receiver(answer)
    receivers.push(made)
    return made
  }
  afterAll(async () => {
    await Promise.all(opened.map((sim) => sim.close()))
    await Promise.all(receivers.map((made) => made.close()))
  })

  it('when an intent succeeds, then payment_intent.succeeded is POSTed signed, and the SDK verifies it', async () => {
    const hook = await listen()
    const secret = 'whsec_configured_secret'
    const lines: string[] = []
    const sim = await open({ webhooks: [{ url: hook.url, secret }], log: (line) => lines.push(line) })
    const stripe = client(sim)
    const key = newKey()
    const intent = await stripe.paymentIntents.create(
      { amount: 1200, currency: 'usd', payment_method: 'pm_card_visa', confirm: true },
      { idempotencyKey: key },
    )
    const delivery = await eventually('the event', async () => hook.deliveries[0])
    expect(delivery.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
    const event = stripe.webhooks.constructEvent(delivery.body, delivery.signature, secret)
    expect(event).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      object: 'event',
      api_version: stripeApiVersion,
      livemode: false,
      type: 'payment_intent.succeeded',
      pending_webhooks: 1,
      request: { id: intent.lastResponse.requestId, idempotency_key: key },
      data: { object: { id: intent.id, status: 'succeeded', amount: 1200 } },
    })
    expect(() => stripe.webhooks.constructEvent(delivery.body, delivery.signature, 'whsec_wrong')).toThrow()
    await eventually('the delivery counted', async () =>
      sim.stats().webhooksDelivered === 1 ? true : undefined,
    )
    expect(sim.stats()).toMatchObject({ webhooksSent: 1, webhooksDelivered: 1, webhooksFailed: 0 })
    // a line for the request and one for the delivery; neither names the key, the secret nor the receiver
    await eventually('the log lines', async () => (lines.length >= 2 ? true : undefined))
    expect(lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ event: event.id, type: event.type, attempt: 1, status: 200 }),
    )
    for (const line of lines)
      for (const secretText of [secret, 'sk_test_sim', hook.url]) expect(line).not.toContain(secretText)
  })

  it('when payments fail, ask for 3-D Secure or are cancelled, then their events come, and GET /v1/events lists them newest first', async () => {
    const hook = await listen()
    const sim = await open({ webhooks: [{ url: hook.url, secret: 'whsec_x' }] })
    const stripe = client(sim)
    await failure(
      stripe.paymentIntents.create({
        amount: 100,
        currency: 'usd',
        payment_method: 'pm_card_chargeDeclined',
        confirm: true,
      }),
    )
    const action = await stripe.paymentIntents.create({
      amount: 100,
      currency: 'usd',
      payment_method: 'pm_card_authenticationRequired',
      confirm: true,
    })
    await stripe.paymentIntents.cancel(action.id)
    const types = [
      'payment_intent.payment_failed',
      'payment_intent.requires_action',
      'payment_intent.canceled',
    ]
    await eventually('three events', async () => (hook.deliveries.length >= 3 ? true : undefined))
    expect(
      eventsOf(hook.deliveries)
        .map((event) => event.type)
        .sort(),
    ).toEqual([...types].sort())
    const listed = await stripe.events.list({ limit: 2 })
    expect(listed.object).toBe('list')
    expect(listed.data.map((event) => event.type)).toEqual([
      'payment_intent.canceled',
      'payment_intent.requires_action',
    ])
    expect(listed.has_more).toBe(true)
    const first = await stripe.events.retrieve(listed.data[0]!.id)
    expect((first.data.object as Stripe.PaymentIntent).status).toBe('canceled')
  })

  it('when an endpoint is made at runtime, then it gets charge.refunded (the charge with its refunds) and charge.dispute.created with its own secret', async () => {
    const hook = await listen()
    const sim = await open({})
    const stripe = client(sim)
    const endpoint = await stripe.webhookEndpoints.create({
      url: hook.url,
      enabled_events: ['charge.refunded', 'charge.dispute.created'],
    })
    expect(endpoint).toMatchObject({ id: expect.stringMatching(/^we_/), url: hook.url })
    expect(endpoint.secret).toMatch(/^whsec_/)
    const intent = await stripe.paymentIntents.create({
      amount: 800,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
    })
    const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 300 })
    const dispute = (await stripe.rawRequest('POST', '/v1/test_helpers/disputes', {
      payment_intent: intent.id,
    })) as Stripe.Dispute
    expect(dispute).toMatchObject({
      id: expect.stringMatching(/^dp_/),
      object: 'dispute',
      status: 'needs_response',
    })
    await eventually('two events', async () => (hook.deliveries.length >= 2 ? true : undefined))
    const events = hook.deliveries.map((delivery) =>
      stripe.webhooks.constructEvent(delivery.body, delivery.signature, endpoint.secret!),
    )
    const refunded = events.find((event) => event.type === 'charge.refunded')!
    expect(refunded.data.object).toMatchObject({
      object: 'charge',
      id: intent.latest_charge,
      amount_refunded: 300,
      refunded: false,
      refunds: { object: 'list', data: [{ id: refund.id, amount: 300 }] },
    })
    const disputed = events.find((event) => event.type === 'charge.dispute.created')!
    expect(disputed.data.object).toMatchObject({
      id: dispute.id,
      object: 'dispute',
      amount: 800,
      charge: intent.latest_charge,
      payment_intent: intent.id,
      reason: 'fraudulent',
      status: 'needs_response',
    })
    expect(hook.deliveries).toHaveLength(2)
  })

  it("when a charge is paid with Stripe's dispute card (4000000000002685), then it succeeds and charge.dispute.created follows, product_not_received", async () => {
    const hook = await listen()
    const secret = 'whsec_disputed'
    const sim = await open({ webhooks: [{ url: hook.url, secret }] })
    const stripe = client(sim)
    for (const paymentMethod of [
      'pm_card_createDisputeProductNotReceived',
      (
        await stripe.paymentMethods.create({
          type: 'card',
          card: { number: '4000000000002685', exp_month: 12, exp_year: 2099, cvc: '123' },
        })
      ).id,
    ]) {
      const intent = await stripe.paymentIntents.create({
        amount: 1200,
        currency: 'usd',
        payment_method: paymentMethod,
        confirm: true,
      })
      expect(intent.status, paymentMethod).toBe('succeeded')
      await eventually(`the dispute of ${intent.id}`, async () =>
        hook.deliveries.some(
          (delivery) =>
            delivery.body.includes(`"payment_intent":"${intent.id}"`) &&
            delivery.body.includes('charge.dispute.created'),
        )
          ? true
          : undefined,
      )
      const disputed = hook.deliveries
        .map((delivery) => stripe.webhooks.constructEvent(delivery.body, delivery.signature, secret))
        .find(
          (event) =>
            event.type === 'charge.dispute.created' &&
            (event.data.object as Stripe.Dispute).payment_intent === intent.id,
        )
      expect(disputed?.data.object).toMatchObject({
        object: 'dispute',
        amount: 1200,
        charge: intent.latest_charge,
        reason: 'product_not_received',
        status: 'needs_response',
      })
    }
  })

  it(
    'when the receiver answers 500 twice and then 200, then the same event comes three times, each signed anew',
    async () => {
      const hook = await listen((attempt) => (attempt <= 2 ? 500 : 200))
      const secret = 'whsec_retried'
      // over a second apart, so that each signature's timestamp (in seconds) is a later one
      const sim = await open({
        webhooks: [{ url: hook.url, secret }],
        webhookRetryDelaysMs: [1100, 1100, 1100],
      })
      const stripe = client(sim)
      await stripe.paymentIntents.create({
        amount: 100,
        currency: 'usd',
        payment_method: 'pm_card_visa',
        confirm: true,
      })
      await eventually('three deliveries', async () =>
        sim.stats().webhooksDelivered === 1 ? true : undefined,
      )
      expect(hook.deliveries).toHaveLength(3)
      const events = hook.deliveries.map((delivery) =>
        stripe.webhooks.constructEvent(delivery.body, delivery.signature, secret),
      )
      expect(new Set(events.map((event) => event.id)).size).toBe(1)
      const times = hook.deliveries.map((delivery) => Number(/^t=(\d+),/.exec(delivery.signature)![1]))
      expect(times[1]!).toBeGreaterThan(times[0]!)
      expect(times[2]!).toBeGreaterThan(times[1]!)
      expect(new Set(hook.deliveries.map((delivery) => delivery.signature)).size).toBe(3)
      expect(sim.stats()).toMatchObject({ webhooksSent: 3, webhooksDelivered: 1, webhooksFailed: 0 })
    },
    scaledMs(30_000),
  )

  it('when the receiver never answers 2xx, or not in time, then the deliveries are retried and given up (webhooksFailed)', async () => {
    const down = await listen(() => 500)
    const silent = await listen((attempt) => (attempt === 1 ? 0 : 204))
    const sim = await open({
      webhooks: [
        { url: down.url, secret: 'whsec_a' },
        { url: silent.url, secret: 'whsec_b' },
      ],
      webhookRetryDelaysMs: [10, 10],
      webhookTimeoutMs: 300,
    })
    await client(sim).paymentIntents.create({
      amount: 100,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
    })
    await eventually('given up and delivered', async () => {
      const stats = sim.stats()
      return stats.webhooksFailed === 1 && stats.webhooksDelivered === 1 ? true : undefined
    })
    expect(down.deliveries).toHaveLength(3)
    expect(silent.deliveries).toHaveLength(2)
    expect(sim.stats().webhooksSent).toBe(5)
  })
})

describe('Stripe subset: settings and test cards', () => {
  it('when the environment names a webhook endpoint, a key, a TTL or a public address, then they are read; impossible ones refuse to start', async () => {
    expect(
      optionsFromEnv({
        PAYMENT_SIM_WEBHOOK_URL: 'http://127.0.0.1:4000/hooks',
        PAYMENT_SIM_WEBHOOK_SECRET: 'whsec_dev',
        PAYMENT_SIM_SECRET_KEY: 'sk_test_dev',
        PAYMENT_SIM_PUBLIC_URL: 'http://127.0.0.1:3099',
        PAYMENT_SIM_IDEMPOTENCY_TTL_MS: '60000',
      }),
    ).toMatchObject({
      webhooks: [{ url: 'http://127.0.0.1:4000/hooks', secret: 'whsec_dev' }],
      secretKey: 'sk_test_dev',
      publicUrl: 'http://127.0.0.1:3099',
      idempotencyTtlMs: 60_000,
    })
    expect(() => optionsFromEnv({ PAYMENT_SIM_WEBHOOK_URL: 'http://127.0.0.1:4000/hooks' })).toThrow(
      /PAYMENT_SIM_WEBHOOK_SECRET/,
    )
    await expect(
      createPaymentSimulator({ port: 0, webhooks: [{ url: 'ftp://127.0.0.1/x', secret: 'whsec_x' }] }),
    ).rejects.toThrow(/webhooks/)
    await expect(createPaymentSimulator({ port: 0, secretKey: 'pk_test_x' })).rejects.toThrow(/secretKey/)
    await expect(createPaymentSimulator({ port: 0, webhookRetryDelaysMs: [-1] })).rejects.toThrow(
      /webhookRetryDelaysMs/,
    )
    expect(defaultWebhookRetryDelaysMs).toEqual([1000, 5000, 30000, 120000, 600000])
    expect(defaultIdempotencyTtlMs).toBe(24 * 60 * 60 * 1000)
  })

  it('when publicUrl is set, then the 3-D Secure page is linked there', async () => {
    const sim = await createPaymentSimulator({ port: 0, publicUrl: 'http://127.0.0.1:18080/' })
    try {
      const intent = await client(sim).paymentIntents.create({
        amount: 100,
        currency: 'usd',
        payment_method: 'pm_card_threeDSecure2Required',
        confirm: true,
        return_url: returnUrl,
      })
      expect(intent.next_action?.redirect_to_url?.url).toBe(`http://127.0.0.1:18080/3ds/${intent.id}`)
    } finally {
      await sim.close()
    }
  })

  it('documents every test card and test payment method of the Stripe subset, each with its behaviour', () => {
    expect(stripeTestCards).toEqual({
      '4242424242424242': 'succeed',
      '5555555555554444': 'succeed',
      '4000000000000002': 'generic_decline',
      '4000000000009995': 'insufficient_funds',
      '4000002760003184': 'three_d_secure',
      '4000000000003220': 'three_d_secure',
      '4000000000002685': 'dispute',
      '4000000000000077': 'delay',
      '4000000000000259': 'hang',
      '4000000000000119': 'provider_error',
      '4000000000000341': 'rate_limit',
    })
    expect(Object.keys(testPaymentMethods)).toEqual([
      'pm_card_visa',
      'pm_card_mastercard',
      'pm_card_chargeDeclined',
      'pm_card_chargeDeclinedInsufficientFunds',
      'pm_card_authenticationRequired',
      'pm_card_threeDSecure2Required',
      'pm_card_createDisputeProductNotReceived',
    ])
  })
})
