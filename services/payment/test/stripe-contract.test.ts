// The Stripe adapter checked against Stripe's own API description: every request it can send (an intent created and
// confirmed, confirmed again, captured in part and in whole, cancelled, read back, refunded in part and in whole, a
// charge's refunds read) goes through the official SDK to stripe-mock, which validates it against the description of
// the API version the SDK pins and refuses a field or value Stripe does not have — as it refuses the one sent here on
// purpose. Then the kit's upstream rule for the SDK's failures: a decline, a rate limit, a provider failure, an
// address nobody answers and a provider that never answers.
import { createServer, type Server, type Socket } from 'node:net'
import { AppError, ErrorCode } from '@meridian/contracts'
import { type StripeMock, startStripeMock, stripeMockSecretKey } from '@meridian/infra/stripe-mock'
import type { UpstreamStatusError } from '@meridian/service-kit'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createStripeProvider,
  providerFailure,
  type StripeProvider,
  stripeClientOptions,
} from '../src/clients/stripe-provider.ts'

const returnUrl = 'https://shop.example/orders/3f1c9e0a-0000-4000-8000-000000000001'
let key = 0
const idempotencyKey = () => `contract-${process.pid}-${++key}`

describe("the Stripe adapter against stripe-mock (Stripe's API description)", () => {
  let mock: StripeMock
  let provider: StripeProvider

  beforeAll(async () => {
    mock = await startStripeMock()
    provider = createStripeProvider({ secretKey: stripeMockSecretKey, apiBase: mock.url })
  }, 90_000)

  afterAll(async () => {
    await mock?.stop()
  })

  it('when the adapter creates and confirms an intent, confirms it again, captures, cancels and reads it, then every request is accepted', async () => {
    const created = await provider.createIntent({
      amountCents: 2599,
      currency: 'usd',
      orderId: '3f1c9e0a-0000-4000-8000-000000000001',
      paymentMethod: 'pm_card_visa',
      returnUrl,
      idempotencyKey: idempotencyKey(),
    })
    expect(created).toMatchObject({ id: expect.stringMatching(/^pi_/), amountCents: 2599, currency: 'usd' })
    const manual = await provider.createIntent({
      amountCents: 1000,
      currency: 'usd',
      orderId: '3f1c9e0a-0000-4000-8000-000000000002',
      paymentMethod: 'pm_card_visa',
      capture: 'manual',
      returnUrl,
      idempotencyKey: idempotencyKey(),
    })
    expect(manual.id).toMatch(/^pi_/)
    await expect(
      provider.confirmIntent({ paymentIntentId: created.id, returnUrl, idempotencyKey: idempotencyKey() }),
    ).resolves.toMatchObject({ id: created.id })
    await expect(
      provider.confirmIntent({
        paymentIntentId: created.id,
        paymentMethod: 'pm_card_visa',
        returnUrl,
        idempotencyKey: idempotencyKey(),
      }),
    ).resolves.toMatchObject({ id: created.id })
    for (const amountCents of [400, undefined])
      await expect(
        provider.captureIntent({
          paymentIntentId: manual.id,
          idempotencyKey: idempotencyKey(),
          ...(amountCents === undefined ? {} : { amountCents }),
        }),
      ).resolves.toMatchObject({ id: manual.id })
    await expect(
      provider.cancelIntent({ paymentIntentId: manual.id, idempotencyKey: idempotencyKey() }),
    ).resolves.toMatchObject({ id: manual.id })
    await expect(provider.retrieveIntent(created.id)).resolves.toMatchObject({ id: created.id })
  })

  it('when the adapter refunds in part and in whole, then both requests are accepted', async () => {
    for (const amountCents of [500, undefined]) {
      const refund = await provider.refund({
        paymentIntentId: 'pi_contract',
        orderId: '3f1c9e0a-0000-4000-8000-000000000003',
        idempotencyKey: idempotencyKey(),
        ...(amountCents === undefined ? {} : { amountCents }),
      })
      expect(refund.id).toMatch(/^re_/)
    }
  })

  it("when the adapter reads a charge's refunds (a charge.refunded webhook checked), then the request is accepted", async () => {
    const charge = await provider.retrieveChargeRefunds('ch_contract')
    expect(charge).toMatchObject({ chargeId: expect.stringMatching(/^ch_/) })
    expect(typeof charge.amountRefundedCents).toBe('number')
    expect(Array.isArray(charge.refunds)).toBe(true)
  })

  it('when a request names a field Stripe does not have, then stripe-mock refuses it: the check bites', async () => {
    const stripe = new Stripe(stripeMockSecretKey, stripeClientOptions({ apiBase: mock.url, secretKey: '' }))
    const refused = await stripe.paymentIntents
      .create({ amount: 100, currency: 'usd', confirm: true, card_number: '4242424242424242' } as never)
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect((refused as Stripe.errors.StripeError).message).toMatch(/additional properties are not allowed/)
  })

  it('when another API version is asked for, then stripe-mock refuses it: the SDK and the description agree', async () => {
    const stripe = new Stripe(stripeMockSecretKey, {
      ...stripeClientOptions({ apiBase: mock.url, secretKey: '' }),
      apiVersion: '2025-01-27.acacia' as never,
    })
    await expect(stripe.paymentIntents.retrieve('pi_any')).rejects.toBeInstanceOf(
      Stripe.errors.StripeInvalidRequestError,
    )
  })
})

describe("the SDK's failures by the kit's upstream rule", () => {
  const failure = (error: unknown) => providerFailure(error, 'POST', '/v1/payment_intents') as AppError

  it('when the card is declined (402), then 402 PAYMENT_SERVICE_ERROR with the provider message and its code kept', () => {
    const declined = failure(
      new Stripe.errors.StripeCardError({
        message: 'Your card was declined.',
        code: 'card_declined',
        decline_code: 'generic_decline',
        type: 'card_error',
        statusCode: 402,
      } as never),
    )
    expect(declined).toBeInstanceOf(AppError)
    expect(declined).toMatchObject({ statusCode: 402, code: ErrorCode.PAYMENT_SERVICE_ERROR })
    expect(declined.message).toBe('Your card was declined.')
    expect((declined.cause as UpstreamStatusError).upstreamCode).toBe('card_declined')
  })

  it('when the provider limits the rate (429), then 429 RATE_LIMITED with retryAfter 30', () => {
    const limited = failure(
      new Stripe.errors.StripeRateLimitError({ message: 'Too many requests', statusCode: 429 } as never),
    )
    expect(limited).toMatchObject({ statusCode: 429, code: ErrorCode.RATE_LIMITED, retryAfter: 30 })
  })

  it('when the provider fails (500) or refuses the request (400), then 502 PAYMENT_SERVICE_ERROR naming no address', () => {
    for (const error of [
      new Stripe.errors.StripeAPIError({ message: 'boom', statusCode: 500 } as never),
      new Stripe.errors.StripeInvalidRequestError({ message: 'bad', statusCode: 400, code: 'x' } as never),
    ]) {
      const failed = failure(error)
      expect(failed).toMatchObject({ statusCode: 502, code: ErrorCode.PAYMENT_SERVICE_ERROR })
      expect(failed.message).toBe('payment provider failed to handle the request')
    }
  })

  it('when anything else is thrown, then it is not taken for the provider’s answer', () => {
    const bug = new TypeError('a bug of ours')
    expect(providerFailure(bug, 'GET', '/v1/payment_intents/:id')).toBe(bug)
  })

  describe('on the wire', () => {
    let silent: Server
    let silentPort = 0
    const held = new Set<Socket>()

    beforeAll(async () => {
      // accepts the connection and never answers
      silent = createServer((socket) => held.add(socket))
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
      const address = silent.address()
      silentPort = typeof address === 'object' && address ? address.port : 0
    })

    afterAll(async () => {
      for (const socket of held) socket.destroy()
      await new Promise((resolve) => silent?.close(resolve))
    })

    it('when the provider never answers, then 503 SERVICE_UNAVAILABLE after the deadline', async () => {
      const provider = createStripeProvider({
        secretKey: stripeMockSecretKey,
        apiBase: `http://127.0.0.1:${silentPort}`,
        timeoutMs: 300,
      })
      await expect(provider.retrieveIntent('pi_any')).rejects.toMatchObject({
        statusCode: 503,
        code: ErrorCode.SERVICE_UNAVAILABLE,
        message: 'payment provider is unavailable',
      })
    })

    it('when nothing listens at the address, then 503 SERVICE_UNAVAILABLE', async () => {
      const closed = createServer()
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
      const address = closed.address()
      const port = typeof address === 'object' && address ? address.port : 0
      await new Promise((resolve) => closed.close(resolve))
      const provider = createStripeProvider({
        secretKey: stripeMockSecretKey,
        apiBase: `http://127.0.0.1:${port}`,
      })
      await expect(
        provider.createIntent({
          amountCents: 100,
          currency: 'usd',
          orderId: 'o',
          paymentMethod: 'pm_card_visa',
          returnUrl,
          idempotencyKey: idempotencyKey(),
        }),
      ).rejects.toMatchObject({ statusCode: 503, code: ErrorCode.SERVICE_UNAVAILABLE })
    })
  })
})
