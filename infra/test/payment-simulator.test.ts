// The payment simulator as a stand-in: its own endpoints (health, stats, an order's summary, faults, reset), the
// settings it starts with (failure rate and seed, refunds declining, latency, the slow and hanging cards' times), what
// reset does to calls in flight, and its log lines, which never hold a card number. Payments here go through the
// Stripe subset by hand (form bodies, a secret key), as any client sends them; the subset itself, through the SDK, is
// payment-simulator-stripe.test.ts'. Traffic to 127.0.0.1 only.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  createPaymentSimulator,
  defaultPort,
  optionsFromEnv,
  type PaymentSimulator,
  type PaymentSimulatorOptions,
  stripeTestCards,
} from '../src/payment-simulator/index.ts'
import { eventually } from './eventually.ts'

interface Reply {
  status: number
  body: Record<string, unknown> & {
    error?: { code?: string; type?: string; message: string; [key: string]: unknown }
  }
  headers: Headers
}

const secretKey = 'sk_test_simulator_tests'
const newKey = () => `key-${randomUUID()}`
const newOrder = () => `order-${randomUUID()}`

/** A JSON request to the simulator's own endpoints (no key). */
async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers }
}

/** A request of the Stripe subset by hand: form parameters, the secret key, an Idempotency-Key when given. */
async function stripeCall(
  base: string,
  method: string,
  path: string,
  params: Record<string, string> = {},
  { key, signal }: { key?: string; signal?: AbortSignal } = {},
): Promise<Reply> {
  const form = new URLSearchParams(params).toString()
  const response = await fetch(`${base}${path}${method === 'GET' && form ? `?${form}` : ''}`, {
    method,
    headers: {
      authorization: `Bearer ${secretKey}`,
      ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    ...(method === 'POST' ? { body: form } : {}),
    ...(signal ? { signal } : {}),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers }
}

const cardParams = (number: string) => ({
  type: 'card',
  'card[number]': number,
  'card[exp_month]': '12',
  'card[exp_year]': '2040',
  'card[cvc]': '123',
})

/** A payment method made of `number`: its id. */
async function paymentMethod(base: string, number: string): Promise<string> {
  const reply = await stripeCall(base, 'POST', '/v1/payment_methods', cardParams(number))
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body.id as string
}

/** A PaymentIntent created and confirmed at once, for `orderId`, paid with `method` (pm_card_visa unless told). */
const pay = (
  base: string,
  { amount = 1000, orderId = newOrder(), method = 'pm_card_visa' } = {},
  options: { key?: string; signal?: AbortSignal } = {},
) =>
  stripeCall(
    base,
    'POST',
    '/v1/payment_intents',
    {
      amount: String(amount),
      currency: 'usd',
      payment_method: method,
      confirm: 'true',
      'metadata[orderId]': orderId,
    },
    options,
  )

/**
 * Until a payment with `key` is running at the provider: a probe with the key and an unknown parameter is refused as
 * another request's (idempotency_error) only while the key is held, and otherwise before it runs (it keeps nothing).
 */
async function untilRunning(base: string, key: string): Promise<void> {
  await eventually(`the payment with ${key} running`, async () => {
    const probe = await stripeCall(base, 'POST', '/v1/payment_intents', { probe: 'x' }, { key })
    return probe.body.error?.type === 'idempotency_error' ? true : undefined
  })
}

const summaryOf = async (base: string, orderId: string) =>
  (await call(base, 'GET', `/v1/orders/${encodeURIComponent(orderId)}/summary`)).body

describe('payment simulator: its own endpoints', () => {
  let sim: PaymentSimulator
  beforeAll(async () => {
    sim = await createPaymentSimulator({ port: 0 })
  })
  afterAll(async () => {
    await sim.close()
  })
  beforeEach(() => {
    sim.reset()
  })

  it('when an order was never charged, then its summary is all zeros', async () => {
    expect(await summaryOf(sim.url, 'never-seen')).toEqual({
      orderId: 'never-seen',
      charges: 0,
      failedCharges: 0,
      refunds: 0,
      charged: 0,
      refunded: 0,
    })
  })

  it('when GET /v1/stats and POST /v1/reset are called, then the totals show and then start again from zero, the objects forgotten', async () => {
    const orderId = newOrder()
    const method = await paymentMethod(sim.url, '4242 4242 4242 4242')
    const paid = await pay(sim.url, { amount: 700, orderId, method })
    expect(paid.body.status).toBe('succeeded')
    const refunded = await stripeCall(sim.url, 'POST', '/v1/refunds', {
      payment_intent: paid.body.id as string,
      amount: '200',
    })
    expect(refunded.body.status).toBe('succeeded')
    expect((await pay(sim.url, { orderId, method: 'pm_card_chargeDeclined' })).status).toBe(402)
    const stats = await call(sim.url, 'GET', '/v1/stats')
    expect(stats.status).toBe(200)
    expect(stats.body).toMatchObject({
      paymentMethods: 1,
      charges: 1,
      failedCharges: 1,
      refunds: 1,
      charged: 700,
      refunded: 200,
    })
    expect(await summaryOf(sim.url, orderId)).toEqual({
      orderId,
      charges: 1,
      failedCharges: 1,
      refunds: 1,
      charged: 700,
      refunded: 200,
    })
    const reset = await call(sim.url, 'POST', '/v1/reset', {})
    expect(reset.status).toBe(200)
    expect(sim.stats()).toMatchObject({
      paymentMethods: 0,
      charges: 0,
      failedCharges: 0,
      refunds: 0,
      charged: 0,
    })
    expect((await stripeCall(sim.url, 'GET', `/v1/payment_intents/${paid.body.id}`)).status).toBe(404)
    expect((await pay(sim.url, { method })).body.error?.code).toBe('resource_missing')
  })

  it('when POST /v1/faults names an unknown fault or setting, or another method is used, then 400 or 405 and the faults stay', async () => {
    sim.setFaults({ refunds: 'decline' })
    for (const body of [{ refunds: 'sometimes' }, { charges: 'decline' }, { refunds: 1 }]) {
      const reply = await call(sim.url, 'POST', '/v1/faults', body)
      expect(reply.status).toBe(400)
      expect(reply.body.error?.code).toBe('invalid_request')
    }
    const notJson = await call(sim.url, 'POST', '/v1/faults', '[1]', { 'content-type': 'application/json' })
    expect(notJson.status).toBe(400)
    expect((await call(sim.url, 'DELETE', '/v1/faults')).status).toBe(405)
    expect(sim.faults()).toEqual({ refunds: 'decline' })
    expect(() => sim.setFaults({ refunds: 'never' as never })).toThrow(/refunds must be one of/)
    expect((await call(sim.url, 'POST', '/v1/faults', {})).body).toEqual({ refunds: 'decline' })
    expect((await call(sim.url, 'GET', '/v1/faults')).body).toEqual({ refunds: 'decline' })
  })

  it("when a path is the simulator's own, then it answers in its shape whatever the headers; any other path is the Stripe subset's, the old tokens and charges included", async () => {
    expect((await call(sim.url, 'GET', '/health')).body).toEqual({ status: 'ok' })
    const wrongMethod = await call(sim.url, 'POST', '/v1/stats', {})
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.body.error?.code).toBe('method_not_allowed')
    // with a key and a form, its own paths are still its own
    expect((await stripeCall(sim.url, 'GET', '/v1/stats')).body).toMatchObject({ charges: 0 })
    // the simulator's former JSON API is gone: Stripe's answers, 401 without a key, 404 with one
    const card = { card: { number: '4242424242424242', expMonth: 12, expYear: 2040, cvc: '123' } }
    for (const path of ['/v1/tokens', '/v1/charges']) {
      const anonymous = await call(sim.url, 'POST', path, card)
      expect(anonymous.status, path).toBe(401)
      expect(anonymous.body.error?.type).toBe('invalid_request_error')
      const keyed = await stripeCall(sim.url, 'POST', path, { amount: '100' })
      expect(keyed.status, path).toBe(404)
      expect(keyed.body.error?.message).toMatch(/Unrecognized request URL/)
    }
    expect(sim.stats()).toMatchObject({ paymentMethods: 0, charges: 0 })
  })
})

describe('payment simulator: settings', () => {
  const opened: PaymentSimulator[] = []
  const open = async (options: PaymentSimulatorOptions) => {
    const sim = await createPaymentSimulator({ port: 0, ...options })
    opened.push(sim)
    return sim
  }
  afterAll(async () => {
    await Promise.all(opened.map((sim) => sim.close()))
  })

  async function statuses(sim: PaymentSimulator, count: number): Promise<number[]> {
    const result: number[] = []
    for (let index = 0; index < count; index++)
      result.push((await pay(sim.url, { amount: 100, orderId: 'fault-run' }, { key: newKey() })).status)
    return result
  }

  it('when a failure rate and a seed are set, then the same sequence of 500s comes twice (after reset, and on another instance)', async () => {
    const sim = await open({ failureRate: 0.5, seed: 42 })
    const first = await statuses(sim, 24)
    expect(new Set(first)).toEqual(new Set([200, 500]))
    sim.reset()
    expect(await statuses(sim, 24)).toEqual(first)
    const twin = await open({ failureRate: 0.5, seed: 42 })
    expect(await statuses(twin, 24)).toEqual(first)
    const other = await open({ failureRate: 0.5, seed: 7 })
    expect(await statuses(other, 24)).not.toEqual(first)
    const succeeded = first.filter((status) => status === 200).length
    // an injected 500 comes before the intent is made: counted as a failed attempt, in no order's summary
    expect(twin.stats()).toMatchObject({ charges: succeeded, failedCharges: 24 - succeeded })
    expect(await summaryOf(twin.url, 'fault-run')).toMatchObject({
      charges: succeeded,
      failedCharges: 0,
      charged: succeeded * 100,
    })
  })

  it('when an injected 500 is retried with the same key, then it runs again until it succeeds, charged once', async () => {
    // seed 11 at 0.6: injected failures first, then a success
    const sim = await open({ failureRate: 0.6, seed: 11 })
    const key = newKey()
    const seen: number[] = []
    for (let attempt = 0; attempt < 30 && seen.at(-1) !== 200; attempt++)
      seen.push((await pay(sim.url, { amount: 100, orderId: 'retried' }, { key })).status)
    expect(seen.at(-1)).toBe(200)
    expect(seen.slice(0, -1)).toEqual(seen.slice(0, -1).map(() => 500))
    expect(seen.length).toBeGreaterThan(1)
    const replay = await pay(sim.url, { amount: 100, orderId: 'retried' }, { key })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(await summaryOf(sim.url, 'retried')).toMatchObject({ charges: 1, charged: 100 })
    expect(sim.stats()).toMatchObject({ charges: 1, failedCharges: seen.length - 1 })
  })

  it('when the failure rate is 1, then every payment and refund answers 500 api_error while payment methods are still made', async () => {
    const sim = await open({ failureRate: 1 })
    const method = await paymentMethod(sim.url, '4242424242424242')
    const paid = await pay(sim.url, { method })
    expect(paid.status).toBe(500)
    expect(paid.body.error?.type).toBe('api_error')
    const refund = await stripeCall(sim.url, 'POST', '/v1/refunds', { payment_intent: 'pi_x' })
    expect(refund.status).toBe(500)
    expect(sim.stats()).toMatchObject({ paymentMethods: 1, charges: 0, failedCharges: 1, providerErrors: 2 })
  })

  it('when the simulator starts with refunds declining, then refunds decline until told otherwise, and again after reset', async () => {
    const sim = await open({ refunds: 'decline' })
    expect(sim.faults()).toEqual({ refunds: 'decline' })
    const paid = await pay(sim.url, { amount: 100, orderId: 'declining' })
    expect(paid.body.status).toBe('succeeded')
    const refund = () =>
      stripeCall(
        sim.url,
        'POST',
        '/v1/refunds',
        { payment_intent: paid.body.id as string },
        { key: newKey() },
      )
    expect((await refund()).body).toMatchObject({ status: 'failed', failure_reason: 'declined' })
    sim.setFaults({ refunds: 'succeed' })
    expect((await refund()).body).toMatchObject({ status: 'succeeded', amount: 100 })
    sim.reset()
    expect(sim.faults()).toEqual({ refunds: 'decline' })
  })

  it('when the client gives up on a hanging payment, then the provider still charges it, and a retry with the key replays that charge', async () => {
    const sim = await open({ hangMs: 400 })
    const method = await paymentMethod(sim.url, '4000000000000259')
    const key = newKey()
    const body = { amount: 100, orderId: 'hung', method }
    // the client gives up once the provider has the call: the hang is the provider's, not the way there
    const giveUp = new AbortController()
    const given = pay(sim.url, body, { key, signal: giveUp.signal })
    await untilRunning(sim.url, key)
    giveUp.abort()
    await expect(given).rejects.toThrow(/aborted|timeout/i)
    // the provider goes on and charges it
    await eventually('the hung payment is charged', async () =>
      sim.stats().charges === 1 ? true : undefined,
    )
    const retry = await pay(sim.url, body, { key })
    expect(retry.status).toBe(200)
    expect(retry.body.status).toBe('succeeded')
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(await summaryOf(sim.url, 'hung')).toMatchObject({ charges: 1, charged: 100 })
  })

  it('when reset comes while a payment is in flight, then that call is dropped and nothing of it remains', async () => {
    const sim = await open({ delayMs: 500 })
    const method = await paymentMethod(sim.url, '4000000000000077')
    const key = newKey()
    const pending = pay(sim.url, { amount: 100, orderId: 'dropped', method }, { key })
    await untilRunning(sim.url, key)
    sim.reset()
    await expect(pending).rejects.toThrow()
    // past the delay the dropped call would have run to: a pause, as nothing can be waited for that does not come;
    // it is a timer of this process set after the call's, so the call's 500 ms would have ended first
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(sim.stats()).toMatchObject({ charges: 0, failedCharges: 0 })
    expect(await summaryOf(sim.url, 'dropped')).toMatchObject({ charges: 0 })
  })

  it('when a latency range is set, then every API call takes at least its minimum; stats and reset take none', async () => {
    const sim = await open({ latencyMs: { min: 60, max: 90 }, seed: 5 })
    for (let index = 0; index < 3; index++) {
      const started = performance.now()
      const reply = await stripeCall(sim.url, 'POST', '/v1/payment_methods', cardParams('4242424242424242'))
      expect(reply.status).toBe(200)
      expect(performance.now() - started).toBeGreaterThanOrEqual(55)
    }
    // stats and reset answer while an API call is held by a latency of ten minutes: they wait for none
    const held = await open({ latencyMs: { min: 600_000, max: 600_000 } })
    const methods = stripeCall(held.url, 'POST', '/v1/payment_methods', cardParams('4242424242424242'))
    expect((await call(held.url, 'GET', '/v1/stats')).status).toBe(200)
    expect((await call(held.url, 'POST', '/v1/reset')).status).toBe(200)
    // the reset dropped the held call
    await expect(methods).rejects.toThrow()
  })

  it('when the delay of the delay card is configured, then that card takes that long', async () => {
    const sim = await open({ delayMs: 300 })
    const method = await paymentMethod(sim.url, '4000000000000077')
    const key = newKey()
    const started = performance.now()
    const answer = pay(sim.url, { amount: 100, method }, { key })
    await untilRunning(sim.url, key)
    // not the default's 2000 ms: a timer of this process started after the provider's, of 1000 ms, ends after it
    // (one process's timers fire in the order they end, however loaded the machine)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(sim.stats().charges).toBe(1)
    const reply = await answer
    expect(reply.body.status).toBe('succeeded')
    expect(performance.now() - started).toBeGreaterThanOrEqual(295)
  })

  it('when options or the environment hold an impossible setting, then the simulator refuses to start, naming it', async () => {
    await expect(createPaymentSimulator({ port: 0, failureRate: 1.5 })).rejects.toThrow(/failureRate/)
    await expect(createPaymentSimulator({ port: 0, latencyMs: { min: 10, max: 5 } })).rejects.toThrow(
      /latencyMs/,
    )
    await expect(createPaymentSimulator({ port: 0, refunds: 'maybe' as never })).rejects.toThrow(/refunds/)
    expect(optionsFromEnv({})).toEqual({ port: defaultPort, host: '127.0.0.1' })
    expect(defaultPort).toBe(3099)
    expect(
      optionsFromEnv({
        PORT: '4000',
        HOST: '0.0.0.0',
        PAYMENT_SIM_LATENCY_MS: '50-200',
        PAYMENT_SIM_FAILURE_RATE: '0.1',
        PAYMENT_SIM_SEED: '9',
        PAYMENT_SIM_DELAY_MS: '1500',
        PAYMENT_SIM_HANG_MS: '6000',
        PAYMENT_SIM_REFUNDS: 'decline',
      }),
    ).toEqual({
      port: 4000,
      host: '0.0.0.0',
      latencyMs: { min: 50, max: 200 },
      failureRate: 0.1,
      seed: 9,
      delayMs: 1500,
      hangMs: 6000,
      refunds: 'decline',
    })
    expect(optionsFromEnv({ PAYMENT_SIM_LATENCY_MS: '75' }).latencyMs).toEqual({ min: 75, max: 75 })
    expect(() => optionsFromEnv({ PAYMENT_SIM_FAILURE_RATE: 'often' })).toThrow(/PAYMENT_SIM_FAILURE_RATE/)
    expect(() => optionsFromEnv({ PAYMENT_SIM_LATENCY_MS: '1-2-3' })).toThrow(/PAYMENT_SIM_LATENCY_MS/)
    expect(() => optionsFromEnv({ PORT: '70000' })).toThrow(/PORT/)
    expect(() => optionsFromEnv({ PAYMENT_SIM_REFUNDS: 'sometimes' })).toThrow(/PAYMENT_SIM_REFUNDS/)
  })
})

describe('payment simulator: logs', () => {
  it('when every test card becomes a payment method, pays and is refunded, then each request logs one JSON line and no line nor answer holds a card number', async () => {
    const lines: string[] = []
    const sim = await createPaymentSimulator({
      port: 0,
      delayMs: 10,
      hangMs: 10,
      log: (line) => lines.push(line),
    })
    const bodies: string[] = []
    const numbers = [...Object.keys(stripeTestCards), '4242424242424241', '6011111111111117']
    try {
      let requests = 0
      const send = async (reply: Promise<Reply>) => {
        requests++
        const answered = await reply
        bodies.push(JSON.stringify(answered.body))
        return answered
      }
      for (const number of numbers) {
        const spaced = number.replace(/(\d{4})/g, '$1 ').trim()
        const made = await send(stripeCall(sim.url, 'POST', '/v1/payment_methods', cardParams(spaced)))
        if (made.status !== 200) continue
        const paid = await send(
          pay(sim.url, { amount: 100, orderId: 'logged', method: made.body.id as string }, { key: newKey() }),
        )
        if (paid.body.status === 'succeeded')
          await send(
            stripeCall(
              sim.url,
              'POST',
              '/v1/refunds',
              { payment_intent: paid.body.id as string },
              { key: newKey() },
            ),
          )
      }
      await send(stripeCall(sim.url, 'GET', '/v1/payment_methods/4242424242424242'))
      await send(call(sim.url, 'GET', '/v1/orders/logged/summary'))
      // a line is written as its answer finishes, which may be just after the client has read it
      await eventually('a line for every request', async () => (lines.length >= requests ? true : undefined))
      expect(lines).toHaveLength(requests)
      const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      for (const entry of parsed) {
        expect(entry).toMatchObject({
          method: expect.any(String),
          path: expect.any(String),
          status: expect.any(Number),
        })
        expect(typeof entry.durationMs).toBe('number')
      }
      expect(parsed.some((entry) => entry.brand === 'visa' && entry.last4 === '4242')).toBe(true)
      expect(parsed.some((entry) => entry.code === 'card_declined')).toBe(true)
      expect(parsed.some((entry) => entry.code === 'incorrect_number')).toBe(true)
      for (const number of numbers) {
        const spaced = number.replace(/(\d{4})/g, '$1 ').trim()
        for (const text of [...lines, ...bodies]) {
          expect(text).not.toContain(number)
          expect(text).not.toContain(spaced)
        }
      }
    } finally {
      await sim.close()
    }
  })
})
