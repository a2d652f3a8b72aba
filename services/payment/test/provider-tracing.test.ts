// The payment provider's calls as spans (payment_provider.<operation>) when tracing is on: the idempotency key kept,
// the card number never, a refused charge marked as an error; the provider API call under each (stripe.<call>) is its child.
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { recordSpans, type SpanRecorder } from '@meridian/service-kit/tracing'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createPaymentProvider, type PaymentProvider } from '../src/clients/payment-provider.ts'
import { card, cards } from './support/provider.ts'

describe('the payment provider, traced', () => {
  let simulator: PaymentSimulator
  let provider: PaymentProvider
  let recorder: SpanRecorder

  beforeAll(async () => {
    simulator = await createPaymentSimulator({ port: 0 })
    provider = createPaymentProvider({ secretKey: 'sk_test_meridian', apiBase: simulator.url })
    recorder = recordSpans({}, { name: 'payment' })
  })
  afterEach(() => recorder.clear())
  afterAll(async () => {
    await recorder.stop()
    await provider.close()
    await simulator.close()
  })

  /** Every attribute value of every span recorded so far, as text. */
  const everyAttribute = () =>
    recorder
      .spans()
      .flatMap((span) => Object.values(span.attributes))
      .map(String)
      .join('\n')

  it('when a card is tokenized and charged, then each call is a client span naming its operation, the charge with its idempotency key, and no span holds the card number', async () => {
    const { token } = await provider.tokenize(card(cards.succeeds))
    const charge = await provider.charge({
      amountCents: 1250,
      currency: 'usd',
      orderId: 'order-traced-1',
      token,
      idempotencyKey: 'idem-traced-1',
    })
    expect(charge.status).toBe('succeeded')

    const tokenize = recorder.span('payment_provider.tokenize')
    const charged = recorder.span('payment_provider.charge')
    expect(tokenize?.attributes['meridian.payment.operation']).toBe('tokenize')
    expect(charged?.attributes).toMatchObject({
      'peer.service': 'payment-provider',
      'meridian.payment.operation': 'charge',
      'meridian.payment.idempotency_key': 'idem-traced-1',
      'meridian.order_id': 'order-traced-1',
    })
    // the provider's API call of the charge is its child: the PaymentIntent created under the same key
    const call = recorder
      .spans()
      .find((span) => span.parentSpanContext?.spanId === charged?.spanContext().spanId)
    expect(call?.name).toBe('stripe.payment_intents.create')
    expect(call?.attributes).toMatchObject({
      'peer.service': 'payment-provider',
      'meridian.payment.idempotency_key': 'idem-traced-1',
    })
    expect(everyAttribute()).not.toContain(cards.succeeds)
    expect(everyAttribute()).not.toContain('4242')
  })

  it('when a charge is declined, then its span is marked as an error and the refusal still reaches the caller', async () => {
    const { token } = await provider.tokenize(card(cards.declined))
    await expect(
      provider.charge({
        amountCents: 500,
        currency: 'usd',
        orderId: 'order-traced-2',
        token,
        idempotencyKey: 'idem-2',
      }),
    ).rejects.toMatchObject({ statusCode: 402 })
    const charged = recorder.span('payment_provider.charge')
    expect(charged?.status.code).toBe(2)
    expect(everyAttribute()).not.toContain(cards.declined)
  })

  it('when a charge is refunded, then the refund is a span with its own idempotency key and the charge it refunds', async () => {
    const { token } = await provider.tokenize(card(cards.succeeds))
    const charge = await provider.charge({
      amountCents: 900,
      currency: 'usd',
      orderId: 'order-traced-3',
      token,
      idempotencyKey: 'idem-3',
    })
    await provider.refund({ chargeId: charge.id, idempotencyKey: 'refund-3' })
    expect(recorder.span('payment_provider.refund')?.attributes).toMatchObject({
      'meridian.payment.operation': 'refund',
      'meridian.payment.idempotency_key': 'refund-3',
      'meridian.payment.charge_id': charge.id,
    })
  })
})
