import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  createPaymentSimulator,
  defaultDelayMs,
  defaultPort,
  optionsFromEnv,
  type PaymentSimulator,
  type PaymentSimulatorOptions,
  testCards,
} from '../src/payment-simulator/index.ts'
import { scaledMs } from '../src/test-time.ts'
import { eventually } from './eventually.ts'

interface Reply {
  status: number
  body: Record<string, unknown> & { error?: { code: string; message: string; [key: string]: unknown } }
  headers: Headers
}

const card = (number: string) => ({ number, expMonth: 12, expYear: 2040, cvc: '123' })
const newKey = () => `key-${randomUUID()}`
const newOrder = () => `order-${randomUUID()}`

async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Reply> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    ...(signal ? { signal } : {}),
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : {}, headers: response.headers }
}

/**
 * Until a charge with `key` is running at the provider: a probe with the key and another body (an empty, invalid one)
 * is refused as a mismatch only while the key is held; a key it does not hold refuses it as invalid and keeps nothing.
 */
async function untilRunning(base: string, key: string): Promise<void> {
  await eventually(`the charge with ${key} running`, async () =>
    (await call(base, 'POST', '/v1/charges', {}, { 'idempotency-key': key })).status === 422
      ? true
      : undefined,
  )
}

describe('payment simulator', () => {
  let sim: PaymentSimulator
  const logLines: string[] = []
  const post = (path: string, body: unknown, key?: string, signal?: AbortSignal) =>
    call(sim.url, 'POST', path, body, key === undefined ? {} : { 'idempotency-key': key }, signal)
  const get = (path: string) => call(sim.url, 'GET', path)
  const charge = (body: Record<string, unknown>, key = newKey(), signal?: AbortSignal) =>
    post('/v1/charges', { amount: 1000, currency: 'usd', orderId: newOrder(), ...body }, key, signal)
  const token = async (number: string) => {
    const reply = await post('/v1/tokens', { card: card(number) })
    expect(reply.status).toBe(201)
    return reply.body.token as string
  }
  const summary = (orderId: string) => get(`/v1/orders/${encodeURIComponent(orderId)}/summary`)

  beforeAll(async () => {
    sim = await createPaymentSimulator({ port: 0, log: (line) => logLines.push(line) })
  })
  afterAll(async () => {
    await sim.close()
  })
  beforeEach(() => {
    sim.reset()
  })

  describe('tokens', () => {
    it("when a page of another origin tokenizes a card, then CORS lets it (preflight and answer); charges don't", async () => {
      const preflight = await fetch(`${sim.url}/v1/tokens`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://127.0.0.1:8080',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      })
      expect(preflight.status).toBe(204)
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
      expect(preflight.headers.get('access-control-allow-methods')).toBe('POST')
      expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type')
      const reply = await call(
        sim.url,
        'POST',
        '/v1/tokens',
        { card: card('4242424242424242') },
        { origin: 'http://x' },
      )
      expect(reply.status).toBe(201)
      expect(reply.headers.get('access-control-allow-origin')).toBe('*')
      const charged = await charge({ source: await token('4242424242424242') })
      expect(charged.headers.get('access-control-allow-origin')).toBeNull()
    })

    it('when a valid card is tokenized, then a tok_ id comes back with the brand and last four digits only', async () => {
      const reply = await post('/v1/tokens', { card: card('4242 4242 4242 4242') })
      expect(reply.status).toBe(201)
      expect(reply.body).toEqual({ token: expect.stringMatching(/^tok_\w+$/), brand: 'visa', last4: '4242' })
      const mastercard = await post('/v1/tokens', { card: card('5555555555554444') })
      expect(mastercard.body).toMatchObject({ brand: 'mastercard', last4: '4444' })
      const amex = await post('/v1/tokens', { card: card('378282246310005') })
      expect(amex.body).toMatchObject({ brand: 'amex', last4: '0005' })
      expect(sim.stats().tokens).toBe(3)
    })

    it('when the number fails the Luhn check or is no number, then 422 invalid_card', async () => {
      for (const number of ['4242424242424241', '4242', 'abcd efgh ijkl mnop']) {
        const reply = await post('/v1/tokens', { card: card(number) })
        expect(reply.status).toBe(422)
        expect(reply.body.error).toEqual({ code: 'invalid_card', message: expect.any(String) })
      }
      expect(sim.stats().tokens).toBe(0)
    })

    it('when the card has expired or a field is missing or malformed, then 422 expired_card or 400 invalid_request', async () => {
      const expired = await post('/v1/tokens', { card: { ...card('4242424242424242'), expYear: 2001 } })
      expect(expired.status).toBe(422)
      expect(expired.body.error?.code).toBe('expired_card')
      for (const bad of [
        {},
        { card: 'x' },
        { card: { ...card('4242424242424242'), cvc: undefined } },
        { card: { ...card('4242424242424242'), expMonth: 13 } },
        { card: { ...card('4242424242424242'), number: 4242424242424242 } },
      ]) {
        const reply = await post('/v1/tokens', bad)
        expect(reply.status, JSON.stringify(bad)).toBe(400)
        expect(reply.body.error?.code).toBe('invalid_request')
      }
      const notJson = await call(sim.url, 'POST', '/v1/tokens', '{not json', {
        'content-type': 'application/json',
      })
      expect(notJson.status).toBe(400)
      expect(notJson.body.error?.code).toBe('invalid_request')
    })
  })

  describe('charges', () => {
    it('when a token of the success card is charged, then 201 ch_ succeeded, readable by id and counted once for the order', async () => {
      const orderId = newOrder()
      const source = await token('4242424242424242')
      const reply = await charge({ source, orderId, amount: 2599, description: 'order 1' })
      expect(reply.status).toBe(201)
      expect(reply.headers.get('idempotent-replayed')).toBeNull()
      expect(reply.body).toMatchObject({
        id: expect.stringMatching(/^ch_\w+$/),
        status: 'succeeded',
        amount: 2599,
        currency: 'usd',
        orderId,
        description: 'order 1',
        brand: 'visa',
        last4: '4242',
      })
      const read = await get(`/v1/charges/${reply.body.id}`)
      expect(read.status).toBe(200)
      expect(read.body).toEqual({ ...reply.body, amountRefunded: 0, refunded: false })
      expect((await summary(orderId)).body).toEqual({
        orderId,
        charges: 1,
        failedCharges: 0,
        refunds: 0,
        charged: 2599,
        refunded: 0,
      })
      expect(sim.stats()).toMatchObject({ charges: 1, charged: 2599, failedCharges: 0 })
    })

    it('when a card is passed straight as the source, or an unknown Luhn-valid number is used, then the charge succeeds', async () => {
      for (const number of ['4242424242424242', '6011111111111117', '4000056655665556']) {
        const reply = await charge({ source: { card: card(number) } })
        expect(reply.status, number).toBe(201)
        expect(reply.body).toMatchObject({ status: 'succeeded', last4: number.slice(-4) })
      }
      const invalid = await charge({ source: { card: card('4000000000000003') } })
      expect(invalid.status).toBe(422)
      expect(invalid.body.error?.code).toBe('invalid_card')
      expect(sim.stats().charges).toBe(3)
    })

    it('when Idempotency-Key is missing, then 400 and nothing is charged', async () => {
      const source = await token('4242424242424242')
      const reply = await post('/v1/charges', { amount: 1000, currency: 'usd', source, orderId: newOrder() })
      expect(reply.status).toBe(400)
      expect(reply.body.error?.code).toBe('idempotency_key_required')
      expect(sim.stats().charges).toBe(0)
    })

    it('when the body is invalid or the token unknown, then 400 or 404 and the key stays free', async () => {
      const source = await token('4242424242424242')
      for (const bad of [
        { amount: 0, source },
        { amount: 10.5, source },
        { amount: '1000', source },
        { currency: 'eur', source },
        { orderId: '', source },
        { source: 42 },
        { source, description: 7 },
      ]) {
        const reply = await charge(bad)
        expect(reply.status, JSON.stringify(bad)).toBe(400)
        expect(reply.body.error?.code).toBe('invalid_request')
      }
      const key = newKey()
      const unknown = await charge({ source: 'tok_unknown' }, key)
      expect(unknown.status).toBe(404)
      expect(unknown.body.error?.code).toBe('resource_missing')
      // a rejected request is not stored: the same key with a corrected body runs
      const corrected = await charge({ source }, key)
      expect(corrected.status).toBe(201)
      expect(sim.stats().charges).toBe(1)
    })

    it('when the same key comes again with the same body, then the stored answer is replayed with Idempotent-Replayed and the order is charged once', async () => {
      const orderId = newOrder()
      const source = await token('4242424242424242')
      const key = newKey()
      const first = await post('/v1/charges', { amount: 1500, currency: 'usd', source, orderId }, key)
      // the same body with its keys in another order is the same request
      const again = await post('/v1/charges', { orderId, source, currency: 'usd', amount: 1500 }, key)
      expect(first.status).toBe(201)
      expect(again.status).toBe(201)
      expect(again.body).toEqual(first.body)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect((await summary(orderId)).body).toMatchObject({ charges: 1, charged: 1500 })
      expect(sim.stats()).toMatchObject({ charges: 1, replays: 1 })
    })

    it('when the same key comes with another body, then 422 idempotency_mismatch and nothing more is charged', async () => {
      const orderId = newOrder()
      const source = await token('4242424242424242')
      const key = newKey()
      expect((await charge({ source, orderId }, key)).status).toBe(201)
      const other = await charge({ source, orderId, amount: 1001 }, key)
      expect(other.status).toBe(422)
      expect(other.body.error?.code).toBe('idempotency_mismatch')
      // a key is the provider's, whatever the endpoint: a refund with a charge's key is a mismatch too
      const refund = await post('/v1/refunds', { charge: 'ch_x' }, key)
      expect(refund.status).toBe(422)
      expect((await summary(orderId)).body).toMatchObject({ charges: 1, charged: 1000 })
    })

    it(
      'when the same key comes while the first call is still running, then 409 idempotency_in_progress, and afterwards the replay',
      async () => {
        const orderId = newOrder()
        const source = await token('4000000000000077')
        const key = newKey()
        const first = charge({ source, orderId }, key)
        await untilRunning(sim.url, key)
        const concurrent = await charge({ source, orderId }, key)
        expect(concurrent.status).toBe(409)
        expect(concurrent.body.error?.code).toBe('idempotency_in_progress')
        expect((await first).status).toBe(201)
        const later = await charge({ source, orderId }, key)
        expect(later.status).toBe(201)
        expect(later.headers.get('idempotent-replayed')).toBe('true')
        expect((await summary(orderId)).body).toMatchObject({ charges: 1, charged: 1000 })
      },
      scaledMs(8000),
    )

    // A delay is shown by a lower bound, which a slow machine only makes easier to meet; "under the 5 s a client
    // waits" is the default's own bound (defaultDelayMs), not a stopwatch's.
    it(
      'when the delay card is charged, then it succeeds after at least the delay (2000 ms by default, under the 5 s a client waits)',
      async () => {
        expect(defaultDelayMs).toBe(2000)
        const source = await token('4000000000000077')
        const started = performance.now()
        const reply = await charge({ source })
        const elapsed = performance.now() - started
        expect(reply.status).toBe(201)
        expect(elapsed).toBeGreaterThanOrEqual(2000)
      },
      scaledMs(8000),
    )

    it('when the declined card is charged, then 402 card_declined is stored as a failed attempt and replayed for the same key', async () => {
      const orderId = newOrder()
      const source = await token('4000000000000002')
      const key = newKey()
      const reply = await charge({ source, orderId }, key)
      expect(reply.status).toBe(402)
      expect(reply.body.error).toEqual({
        code: 'card_declined',
        message: 'Your card was declined.',
        charge: expect.stringMatching(/^ch_/),
      })
      const replay = await charge({ source, orderId }, key)
      expect(replay.status).toBe(402)
      expect(replay.body).toEqual(reply.body)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      const stored = await get(`/v1/charges/${reply.body.error?.charge}`)
      expect(stored.body).toMatchObject({ status: 'failed', failureCode: 'card_declined', orderId })
      expect((await summary(orderId)).body).toEqual({
        orderId,
        charges: 0,
        failedCharges: 1,
        refunds: 0,
        charged: 0,
        refunded: 0,
      })
    })

    it('when the rate-limited card is charged, then 429 with Retry-After: 30, replayed with it for the same key', async () => {
      const orderId = newOrder()
      const key = newKey()
      const body = { source: { card: card('4000000000009995') }, orderId }
      const reply = await charge(body, key)
      expect(reply.status).toBe(429)
      expect(reply.headers.get('retry-after')).toBe('30')
      expect(reply.body.error?.code).toBe('rate_limited')
      const replay = await charge(body, key)
      expect(replay.status).toBe(429)
      expect(replay.headers.get('retry-after')).toBe('30')
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect((await summary(orderId)).body).toMatchObject({ charges: 0, failedCharges: 1, charged: 0 })
    })

    it('when the provider-error card is charged, then 500 which is not stored: the same key runs again, even with another card', async () => {
      const orderId = newOrder()
      const key = newKey()
      const failing = await token('4000000000000119')
      const first = await charge({ source: failing, orderId }, key)
      expect(first.status).toBe(500)
      expect(first.body.error?.code).toBe('provider_error')
      const retry = await charge({ source: failing, orderId }, key)
      expect(retry.status).toBe(500)
      expect(retry.headers.get('idempotent-replayed')).toBeNull()
      const working = await charge({ source: await token('4242424242424242'), orderId }, key)
      expect(working.status).toBe(201)
      expect((await summary(orderId)).body).toMatchObject({ charges: 1, failedCharges: 2, charged: 1000 })
      expect(sim.stats()).toMatchObject({ providerErrors: 2, replays: 0 })
    })

    it(
      'when the hang card is charged, then a client with a 5 s timeout gives up, and a retry with the key meanwhile gets 409',
      async () => {
        const orderId = newOrder()
        const source = await token('4000000000000259')
        const key = newKey()
        const started = performance.now()
        let error: unknown
        try {
          await charge({ source, orderId }, key, AbortSignal.timeout(5000))
        } catch (caught) {
          error = caught
        }
        const elapsed = performance.now() - started
        // the client's own 5 s ended it (not an answer): its timeout, and at least that long
        expect(error).toBeInstanceOf(DOMException)
        expect((error as DOMException).name).toBe('TimeoutError')
        expect(elapsed).toBeGreaterThanOrEqual(4900)
        const retry = await charge({ source, orderId }, key)
        expect(retry.status).toBe(409)
        expect(retry.body.error?.code).toBe('idempotency_in_progress')
      },
      scaledMs(9000),
    )
  })

  describe('refunds', () => {
    async function succeededCharge(amount: number) {
      const orderId = newOrder()
      const reply = await charge({ source: await token('4242424242424242'), orderId, amount })
      expect(reply.status).toBe(201)
      return { orderId, id: reply.body.id as string }
    }

    it('when a charge is refunded in part and then the rest, then re_ refunds add up, the charge shows it, and one more is 422', async () => {
      const { orderId, id } = await succeededCharge(1000)
      const key = newKey()
      const partial = await post('/v1/refunds', { charge: id, amount: 300 }, key)
      expect(partial.status).toBe(201)
      expect(partial.body).toMatchObject({
        id: expect.stringMatching(/^re_/),
        charge: id,
        amount: 300,
        status: 'succeeded',
      })
      const replay = await post('/v1/refunds', { charge: id, amount: 300 }, key)
      expect(replay.body).toEqual(partial.body)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect((await get(`/v1/charges/${id}`)).body).toMatchObject({ amountRefunded: 300, refunded: false })
      const rest = await post('/v1/refunds', { charge: id }, newKey())
      expect(rest.status).toBe(201)
      expect(rest.body.amount).toBe(700)
      expect((await get(`/v1/charges/${id}`)).body).toMatchObject({ amountRefunded: 1000, refunded: true })
      const more = await post('/v1/refunds', { charge: id, amount: 1 }, newKey())
      expect(more.status).toBe(422)
      expect((await summary(orderId)).body).toEqual({
        orderId,
        charges: 1,
        failedCharges: 0,
        refunds: 2,
        charged: 1000,
        refunded: 1000,
      })
    })

    it('when a refund is larger than what is left, then 422 amount_too_large and nothing is refunded', async () => {
      const { orderId, id } = await succeededCharge(500)
      const reply = await post('/v1/refunds', { charge: id, amount: 501 }, newKey())
      expect(reply.status).toBe(422)
      expect(reply.body.error).toMatchObject({ code: 'amount_too_large', remaining: 500 })
      expect((await summary(orderId)).body).toMatchObject({ refunds: 0, refunded: 0 })
    })

    it('when refunds are set to decline (POST /v1/faults), then a refund answers 402 refund_declined and refunds nothing; set back to succeed, the same key refunds once', async () => {
      const { orderId, id } = await succeededCharge(1000)
      const set = await post('/v1/faults', { refunds: 'decline' })
      expect(set.status).toBe(200)
      expect(set.body).toEqual({ refunds: 'decline' })
      expect((await get('/v1/faults')).body).toEqual({ refunds: 'decline' })
      const key = newKey()
      for (let attempt = 0; attempt < 2; attempt++) {
        const declined = await post('/v1/refunds', { charge: id, amount: 400 }, key)
        expect(declined.status).toBe(402)
        expect(declined.body.error).toEqual({
          code: 'refund_declined',
          message: 'The refund was declined by the payment provider.',
        })
        // a decline is not kept for the key: each ask is declined anew
        expect(declined.headers.get('idempotent-replayed')).toBeNull()
      }
      expect((await get(`/v1/charges/${id}`)).body).toMatchObject({ amountRefunded: 0, refunded: false })
      expect((await summary(orderId)).body).toMatchObject({ refunds: 0, refunded: 0 })
      expect(sim.stats()).toMatchObject({ refunds: 0, refunded: 0, declinedRefunds: 2 })

      expect((await post('/v1/faults', { refunds: 'succeed' })).body).toEqual({ refunds: 'succeed' })
      const made = await post('/v1/refunds', { charge: id, amount: 400 }, key)
      expect(made.status).toBe(201)
      expect(made.body).toMatchObject({ charge: id, amount: 400 })
      const replayed = await post('/v1/refunds', { charge: id, amount: 400 }, key)
      expect(replayed.headers.get('idempotent-replayed')).toBe('true')
      expect((await summary(orderId)).body).toMatchObject({ refunds: 1, refunded: 400 })
      expect(sim.stats()).toMatchObject({ refunds: 1, refunded: 400, declinedRefunds: 2 })
    })

    it('when refunds are set to fail (setFaults), then a refund answers 500 provider_error while charges succeed; reset restores the faults', async () => {
      const { orderId, id } = await succeededCharge(800)
      expect(sim.setFaults({ refunds: 'fail' })).toEqual({ refunds: 'fail' })
      const key = newKey()
      const failed = await post('/v1/refunds', { charge: id }, key)
      expect(failed.status).toBe(500)
      expect(failed.body.error?.code).toBe('provider_error')
      expect((await succeededCharge(100)).id).toMatch(/^ch_/)
      expect(sim.stats()).toMatchObject({ providerErrors: 1, refunds: 0, declinedRefunds: 0 })

      sim.reset()
      expect(sim.faults()).toEqual({ refunds: 'succeed' })
      expect((await get('/v1/faults')).body).toEqual({ refunds: 'succeed' })
      // the charge went with the reset: a new one refunds as asked
      const again = await succeededCharge(800)
      expect((await post('/v1/refunds', { charge: again.id }, key)).status).toBe(201)
      expect((await summary(again.orderId)).body).toMatchObject({ refunds: 1, refunded: 800 })
      expect((await summary(orderId)).body).toMatchObject({ refunds: 0 })
    })

    it('when POST /v1/faults names an unknown fault or setting, or another method is used, then 400 or 405 and the faults stay', async () => {
      sim.setFaults({ refunds: 'decline' })
      for (const body of [{ refunds: 'sometimes' }, { charges: 'decline' }, { refunds: 1 }]) {
        const reply = await post('/v1/faults', body)
        expect(reply.status).toBe(400)
        expect(reply.body.error?.code).toBe('invalid_request')
      }
      const notJson = await call(sim.url, 'POST', '/v1/faults', '[1]', { 'content-type': 'application/json' })
      expect(notJson.status).toBe(400)
      expect((await call(sim.url, 'DELETE', '/v1/faults')).status).toBe(405)
      expect(sim.faults()).toEqual({ refunds: 'decline' })
      expect(() => sim.setFaults({ refunds: 'never' as never })).toThrow(/refunds must be one of/)
      expect((await post('/v1/faults', {})).body).toEqual({ refunds: 'decline' })
    })

    it('when the charge is unknown, failed, or the key is missing, then 404, 422 or 400', async () => {
      const unknown = await post('/v1/refunds', { charge: 'ch_nope' }, newKey())
      expect(unknown.status).toBe(404)
      expect(unknown.body.error?.code).toBe('resource_missing')
      const declined = await charge({ source: { card: card('4000000000000002') } })
      const refundOfDeclined = await post('/v1/refunds', { charge: declined.body.error?.charge }, newKey())
      expect(refundOfDeclined.status).toBe(422)
      expect(refundOfDeclined.body.error?.code).toBe('charge_not_refundable')
      const { id } = await succeededCharge(100)
      const noKey = await post('/v1/refunds', { charge: id })
      expect(noKey.status).toBe(400)
      expect(noKey.body.error?.code).toBe('idempotency_key_required')
      const badAmount = await post('/v1/refunds', { charge: id, amount: -5 }, newKey())
      expect(badAmount.status).toBe(400)
      expect(sim.stats().refunds).toBe(0)
    })
  })

  describe('summary, stats, reset and routes', () => {
    it('when an order was never charged, then its summary is all zeros', async () => {
      expect((await summary('never-seen')).body).toEqual({
        orderId: 'never-seen',
        charges: 0,
        failedCharges: 0,
        refunds: 0,
        charged: 0,
        refunded: 0,
      })
    })

    it('when GET /v1/stats and POST /v1/reset are called, then the totals show and then start again from zero', async () => {
      const source = await token('4242424242424242')
      const charged = await charge({ source, amount: 700 })
      await post('/v1/refunds', { charge: charged.body.id, amount: 200 }, newKey())
      await charge({ source: { card: card('4000000000000002') } })
      const stats = await get('/v1/stats')
      expect(stats.status).toBe(200)
      expect(stats.body).toMatchObject({
        tokens: 1,
        charges: 1,
        failedCharges: 1,
        refunds: 1,
        charged: 700,
        refunded: 200,
      })
      expect(sim.stats()).toMatchObject({ charges: 1, refunds: 1 })
      const reset = await post('/v1/reset', {})
      expect(reset.status).toBe(200)
      expect(sim.stats()).toMatchObject({ tokens: 0, charges: 0, failedCharges: 0, refunds: 0, charged: 0 })
      expect((await get(`/v1/charges/${charged.body.id}`)).status).toBe(404)
      const oldToken = await charge({ source })
      expect(oldToken.status).toBe(404)
    })

    it('when a path or method is not the API, then 404 or 405 in the same error shape, and /health answers', async () => {
      expect((await get('/v1/nothing')).body.error?.code).toBe('not_found')
      const wrongMethod = await get('/v1/charges')
      expect(wrongMethod.status).toBe(405)
      expect(wrongMethod.body.error?.code).toBe('method_not_allowed')
      expect((await get('/health')).body).toEqual({ status: 'ok' })
    })

    it('documents every test card, each with its behaviour', () => {
      expect(testCards).toEqual({
        '4242424242424242': 'succeed',
        '4000000000000077': 'delay',
        '4000000000000002': 'decline',
        '4000000000009995': 'rate_limit',
        '4000000000000119': 'provider_error',
        '4000000000000259': 'hang',
      })
    })
  })
})

describe('payment simulator fault settings', () => {
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
    for (let index = 0; index < count; index++) {
      const reply = await call(
        sim.url,
        'POST',
        '/v1/charges',
        { amount: 100, currency: 'usd', orderId: 'fault-run', source: { card: card('4242424242424242') } },
        { 'idempotency-key': newKey() },
      )
      result.push(reply.status)
    }
    return result
  }

  it('when a failure rate and a seed are set, then the same sequence of 500s comes twice (after reset, and on another instance)', async () => {
    const sim = await open({ failureRate: 0.5, seed: 42 })
    const first = await statuses(sim, 24)
    expect(new Set(first)).toEqual(new Set([201, 500]))
    sim.reset()
    expect(await statuses(sim, 24)).toEqual(first)
    const twin = await open({ failureRate: 0.5, seed: 42 })
    expect(await statuses(twin, 24)).toEqual(first)
    const other = await open({ failureRate: 0.5, seed: 7 })
    expect(await statuses(other, 24)).not.toEqual(first)
    const succeeded = first.filter((status) => status === 201).length
    const summary = await call(twin.url, 'GET', '/v1/orders/fault-run/summary')
    expect(summary.body).toMatchObject({
      charges: succeeded,
      failedCharges: 24 - succeeded,
      charged: succeeded * 100,
    })
  })

  it('when an injected 500 is retried with the same key, then it runs again until it succeeds, charged once', async () => {
    // seed 11 at 0.6: three injected failures, then a success
    const sim = await open({ failureRate: 0.6, seed: 11 })
    const key = newKey()
    const body = {
      amount: 100,
      currency: 'usd',
      orderId: 'retried',
      source: { card: card('4242424242424242') },
    }
    const seen: number[] = []
    for (let attempt = 0; attempt < 30 && seen.at(-1) !== 201; attempt++)
      seen.push((await call(sim.url, 'POST', '/v1/charges', body, { 'idempotency-key': key })).status)
    expect(seen).toEqual([500, 500, 500, 201])
    const replay = await call(sim.url, 'POST', '/v1/charges', body, { 'idempotency-key': key })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect((await call(sim.url, 'GET', '/v1/orders/retried/summary')).body).toMatchObject({
      charges: 1,
      charged: 100,
      failedCharges: seen.length - 1,
    })
  })

  it('when the failure rate is 1, then every charge and refund answers 500 provider_error while tokens still work', async () => {
    const sim = await open({ failureRate: 1 })
    const tokenReply = await call(sim.url, 'POST', '/v1/tokens', { card: card('4242424242424242') })
    expect(tokenReply.status).toBe(201)
    const chargeReply = await call(
      sim.url,
      'POST',
      '/v1/charges',
      { amount: 100, currency: 'usd', orderId: 'o', source: tokenReply.body.token },
      { 'idempotency-key': newKey() },
    )
    expect(chargeReply.status).toBe(500)
    expect(chargeReply.body.error?.code).toBe('provider_error')
    const refundReply = await call(
      sim.url,
      'POST',
      '/v1/refunds',
      { charge: 'ch_x' },
      { 'idempotency-key': newKey() },
    )
    expect(refundReply.status).toBe(500)
    expect(sim.stats()).toMatchObject({ charges: 0, failedCharges: 1, providerErrors: 2 })
  })

  it('when the simulator starts with refunds declining, then refunds decline until told otherwise, and again after reset', async () => {
    const sim = await open({ refunds: 'decline' })
    expect(sim.faults()).toEqual({ refunds: 'decline' })
    const charged = await call(
      sim.url,
      'POST',
      '/v1/charges',
      { amount: 100, currency: 'usd', orderId: 'declining', source: { card: card('4242424242424242') } },
      { 'idempotency-key': newKey() },
    )
    expect(charged.status).toBe(201)
    const refund = () =>
      call(sim.url, 'POST', '/v1/refunds', { charge: charged.body.id }, { 'idempotency-key': newKey() })
    expect((await refund()).status).toBe(402)
    sim.setFaults({ refunds: 'succeed' })
    expect((await refund()).status).toBe(201)
    sim.reset()
    expect(sim.faults()).toEqual({ refunds: 'decline' })
  })

  it('when the client gives up on a hanging charge, then the provider still charges it, and a retry with the key replays that charge', async () => {
    const sim = await open({ hangMs: 400 })
    const key = newKey()
    const body = { amount: 100, currency: 'usd', orderId: 'hung', source: { card: card('4000000000000259') } }
    // the client gives up once the provider has the call: the hang is the provider's, not the way there
    const giveUp = new AbortController()
    const given = call(sim.url, 'POST', '/v1/charges', body, { 'idempotency-key': key }, giveUp.signal)
    await untilRunning(sim.url, key)
    giveUp.abort()
    await expect(given).rejects.toThrow(/aborted|timeout/i)
    // the provider goes on and charges it
    await eventually('the hung charge is charged', async () => (sim.stats().charges === 1 ? true : undefined))
    const retry = await call(sim.url, 'POST', '/v1/charges', body, { 'idempotency-key': key })
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect((await call(sim.url, 'GET', '/v1/orders/hung/summary')).body).toMatchObject({
      charges: 1,
      charged: 100,
    })
  })

  it('when reset comes while a charge is in flight, then that call is dropped and nothing of it remains', async () => {
    const sim = await open({ delayMs: 500 })
    const body = {
      amount: 100,
      currency: 'usd',
      orderId: 'dropped',
      source: { card: card('4000000000000077') },
    }
    const key = newKey()
    const pending = call(sim.url, 'POST', '/v1/charges', body, { 'idempotency-key': key })
    await untilRunning(sim.url, key)
    sim.reset()
    await expect(pending).rejects.toThrow()
    // past the delay the dropped call would have run to: a pause, as nothing can be waited for that does not come;
    // it is a timer of this process set after the call's, so the call's 500 ms would have ended first
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(sim.stats()).toMatchObject({ charges: 0, failedCharges: 0 })
    expect((await call(sim.url, 'GET', '/v1/orders/dropped/summary')).body).toMatchObject({ charges: 0 })
  })

  it('when a latency range is set, then every API call takes at least its minimum; stats and reset take none', async () => {
    const sim = await open({ latencyMs: { min: 60, max: 90 }, seed: 5 })
    for (let index = 0; index < 3; index++) {
      const started = performance.now()
      const reply = await call(sim.url, 'POST', '/v1/tokens', { card: card('4242424242424242') })
      expect(reply.status).toBe(201)
      expect(performance.now() - started).toBeGreaterThanOrEqual(55)
    }
    // stats and reset answer while an API call is held by a latency of ten minutes: they wait for none
    const held = await open({ latencyMs: { min: 600_000, max: 600_000 } })
    const tokens = call(held.url, 'POST', '/v1/tokens', { card: card('4242424242424242') })
    expect((await call(held.url, 'GET', '/v1/stats')).status).toBe(200)
    expect((await call(held.url, 'POST', '/v1/reset')).status).toBe(200)
    // the reset dropped the held call
    await expect(tokens).rejects.toThrow()
  })

  it('when the delay of the delay card is configured, then that card takes that long', async () => {
    const sim = await open({ delayMs: 300 })
    const key = newKey()
    const started = performance.now()
    const answer = call(
      sim.url,
      'POST',
      '/v1/charges',
      { amount: 100, currency: 'usd', orderId: 'o', source: { card: card('4000000000000077') } },
      { 'idempotency-key': key },
    )
    await untilRunning(sim.url, key)
    // not the default's 2000 ms: a timer of this process started after the provider's, of 1000 ms, ends after it
    // (one process's timers fire in the order they end, however loaded the machine)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(sim.stats().charges).toBe(1)
    const reply = await answer
    expect(reply.status).toBe(201)
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

describe('payment simulator logs', () => {
  it('when every test card goes through tokens, charges and refunds, then each request logs one JSON line and no line holds a card number', async () => {
    const lines: string[] = []
    const sim = await createPaymentSimulator({
      port: 0,
      delayMs: 10,
      hangMs: 10,
      log: (line) => lines.push(line),
    })
    const bodies: string[] = []
    const numbers = [...Object.keys(testCards), '4242424242424241', '6011111111111117']
    try {
      let requests = 0
      const send = async (method: string, path: string, body?: unknown, key?: string) => {
        requests++
        const reply = await call(sim.url, method, path, body, key ? { 'idempotency-key': key } : {})
        bodies.push(JSON.stringify(reply.body))
        return reply
      }
      for (const number of numbers) {
        const spaced = number.replace(/(\d{4})/g, '$1 ').trim()
        const tokenReply = await send('POST', '/v1/tokens', { card: card(spaced) })
        const direct = await send(
          'POST',
          '/v1/charges',
          { amount: 100, currency: 'usd', orderId: 'logged', source: { card: card(number) } },
          newKey(),
        )
        if (tokenReply.status === 201) {
          const viaToken = await send(
            'POST',
            '/v1/charges',
            { amount: 100, currency: 'usd', orderId: 'logged', source: tokenReply.body.token },
            newKey(),
          )
          if (viaToken.status === 201)
            await send('POST', '/v1/refunds', { charge: viaToken.body.id }, newKey())
        }
        if (direct.status === 201) await send('GET', `/v1/charges/${direct.body.id}`)
      }
      await send('GET', '/v1/charges/4242424242424242')
      await send('GET', '/v1/orders/logged/summary')
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
