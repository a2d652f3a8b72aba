// A refund of an amount under its key (payment.refund_requested 1.2.0 with `amount` and `refundKey`, as a return's
// process asks for its returned lines under `return-<returnId>`), through the consumer main.ts starts, on a real
// database with the provider simulator: exactly those cents refunded once under the provider key `refund-<refundKey>`,
// recorded with the payment's refunded cents, answered payment.refunded carrying the key back — or
// payment.refund_failed.v2 when the provider declines or the order has not that much left; a provider that fails or
// is down makes the handler throw and writes nothing, and the next ask refunds once. A 1.1.0 request (a return named
// by cause and returnId, from an order release before 0.2) is in consumers.test.ts.
import { randomUUID } from 'node:crypto'
import { AppError } from '@meridian/contracts'
import { transaction } from '@meridian/db'
import { createEvent } from '@meridian/events'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { UpstreamStatusError } from '@meridian/service-kit'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createPaymentProvider, refundDeclineOf } from '../src/clients/payment-provider.ts'
import { createKeyedRefundsRepository } from '../src/data/keyed-refunds-repository.ts'
import { createPaymentsRepository } from '../src/data/payments-repository.ts'
import { amountRefundRequest, paymentToRefund, refundAmount } from '../src/domain/amount-refund.ts'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { handleOrderPlaced, outboxOf, placedOrder, requestRefund } from './support/orders.ts'
import { cards, closedPort, orderSummary, providerToken } from './support/provider.ts'

let provider: PaymentSimulator
let payment: PaymentTestApp

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0 })
  payment = await buildPaymentTestApp({ STRIPE_API_BASE: provider.url })
})

afterAll(async () => {
  await payment?.close()
  await provider?.close()
})

beforeEach(() => {
  // a test that made refunds decline or fail leaves them so for no other
  provider.setFaults({ refunds: 'succeed' })
})

const context = { topic: 't', partition: 0, offset: '0', attempt: 1 }

/** payment.refund_requested handled as the runner calls the consumer: in a transaction. */
async function handleRefundRequested(data: Record<string, unknown>): Promise<void> {
  const consumer = payment.consumers.find((each) => each.type === 'payment.refund_requested')
  if (!consumer) throw new Error('no consumer of payment.refund_requested')
  const event = createEvent('payment.refund_requested', data as never, { source: 'order' })
  await transaction(payment.sql, (tx) =>
    (consumer.handler as (...args: unknown[]) => Promise<void>)(event, tx, context),
  )
}

interface ReturnAsk {
  orderId: string
  returnId: string
  amount?: number
  attempt?: number
  reason?: string
}

/** The return's process asks for its refund under its key (attempt 1 unless told). */
const requestReturnRefund = ({ orderId, returnId, amount, attempt = 1, reason = 'return' }: ReturnAsk) =>
  handleRefundRequested({
    orderId,
    reason,
    attempt,
    refundKey: `return-${returnId}`,
    ...(amount === undefined ? {} : { amount }),
  })

/** An order of two lines (2 × 19.99 and 1 × 5.50: 45.48), charged by the order step. */
async function chargedOrder() {
  const data = placedOrder({
    token: await providerToken(provider.url, cards.succeeds),
    total: 45.48,
    items: [
      { productId: randomUUID(), quantity: 2, price: 19.99 },
      { productId: randomUUID(), quantity: 1, price: 5.5 },
    ],
  })
  const charged = await handleOrderPlaced(payment, data)
  if (charged.outcome !== 'processed') throw new Error(`order ${data.orderId} was ${charged.outcome}`)
  return { ...data, paymentId: charged.paymentId }
}

/** The events payment appended about the order after its payment.processed. */
async function answersOf(orderId: string) {
  const rows = await outboxOf(payment, orderId)
  return rows.filter((row) => row.eventType !== 'payment.processed').map((row) => row.payload)
}

const paymentOf = async (orderId: string) => {
  const [row] = await payment.sql<
    { id: string; status: string; refundedCents: number; providerChargeId: string }[]
  >`select id, status, refunded_cents::int, provider_charge_id from payments where order_id = ${orderId}`
  return row
}

const returnRefundsOf = (orderId: string) =>
  payment.sql`
    select refund_key, payment_id, amount_cents::int, provider_refund_id from keyed_refunds
    where order_id = ${orderId} order by created_at`

/** The provider's refund under `key` for that body, asked again straight at the provider (Stripe's wire format). */
async function providerRefund(key: string, body: { charge: string; amount: number }) {
  const answer = await fetch(`${provider.url}/v1/refunds`, {
    method: 'POST',
    headers: {
      authorization: 'Bearer sk_test_meridian',
      'content-type': 'application/x-www-form-urlencoded',
      'idempotency-key': key,
    },
    body: new URLSearchParams({ payment_intent: body.charge, amount: String(body.amount) }).toString(),
  })
  return {
    status: answer.status,
    replayed: answer.headers.get('idempotent-replayed'),
    body: (await answer.json()) as { id?: string; amount?: number },
  }
}

describe("a return's refund", () => {
  it('when a return of part of an order is refunded, then exactly its cents are refunded under refund-return-<returnId>, recorded, and payment.refunded carries its key back with the amount', async () => {
    const order = await chargedOrder()
    const returnId = randomUUID()
    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 19.99, reason: 'too small' })

    expect(await answersOf(order.orderId)).toEqual([
      expect.objectContaining({
        type: 'payment.refunded',
        source: 'payment',
        data: {
          orderId: order.orderId,
          paymentId: order.paymentId,
          amount: 19.99,
          reason: 'too small',
          refundKey: `return-${returnId}`,
        },
      }),
    ])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({
      charges: 1,
      charged: 4548,
      refunds: 1,
      refunded: 1999,
    })
    const charge = await paymentOf(order.orderId)
    expect(charge).toMatchObject({ id: order.paymentId, status: 'succeeded', refundedCents: 1999 })
    const [recorded] = await returnRefundsOf(order.orderId)
    expect(recorded).toEqual({
      refundKey: `return-${returnId}`,
      paymentId: order.paymentId,
      amountCents: 1999,
      providerRefundId: expect.stringMatching(/^re_/),
    })
    // the refund was made under the return's key: the same refund asked with it is the provider's replay of it
    const replay = await providerRefund(`refund-return-${returnId}`, {
      charge: charge?.providerChargeId ?? '',
      amount: 1999,
    })
    expect(replay).toMatchObject({ status: 200, replayed: 'true', body: { id: recorded?.providerRefundId } })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 1999 })
  })

  it('when the return is asked again (its next attempts), then the same payment.refunded answers each time and the provider refunds once', async () => {
    const order = await chargedOrder()
    const returnId = randomUUID()
    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 5.5 })
    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 5.5, attempt: 2 })
    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 5.5, attempt: 3 })

    const answers = await answersOf(order.orderId)
    expect(answers.map((each) => each.type)).toEqual([
      'payment.refunded',
      'payment.refunded',
      'payment.refunded',
    ])
    expect(new Set(answers.map((each) => JSON.stringify(each.data))).size).toBe(1)
    expect(answers[0]?.data).toMatchObject({ amount: 5.5, refundKey: `return-${returnId}` })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 550 })
    expect(await paymentOf(order.orderId)).toMatchObject({ refundedCents: 550 })
    expect(await returnRefundsOf(order.orderId)).toHaveLength(1)
  })

  it('when the same return is asked twice at once, then the order lock makes one provider refund and both are answered', async () => {
    const order = await chargedOrder()
    const returnId = randomUUID()
    await Promise.all([
      requestReturnRefund({ orderId: order.orderId, returnId, amount: 19.99 }),
      requestReturnRefund({ orderId: order.orderId, returnId, amount: 19.99, attempt: 2 }),
    ])
    expect((await answersOf(order.orderId)).map((each) => each.type)).toEqual([
      'payment.refunded',
      'payment.refunded',
    ])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 1999 })
    expect(await paymentOf(order.orderId)).toMatchObject({ refundedCents: 1999 })
  })

  it('when two returns of one order are refunded, then each is refunded its own amount, and the second taking the rest leaves the payment refunded', async () => {
    const order = await chargedOrder()
    const first = randomUUID()
    const second = randomUUID()
    await requestReturnRefund({ orderId: order.orderId, returnId: first, amount: 19.99 })
    await requestReturnRefund({ orderId: order.orderId, returnId: second, amount: 25.49 })

    expect((await answersOf(order.orderId)).map((each) => each.data)).toEqual([
      expect.objectContaining({ amount: 19.99, refundKey: `return-${first}`, paymentId: order.paymentId }),
      expect.objectContaining({ amount: 25.49, refundKey: `return-${second}`, paymentId: order.paymentId }),
    ])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({
      refunds: 2,
      charged: 4548,
      refunded: 4548,
    })
    expect((await returnRefundsOf(order.orderId)).map((each) => each.amountCents)).toEqual([1999, 2549])
    expect(await paymentOf(order.orderId)).toMatchObject({ status: 'refunded', refundedCents: 4548 })
  })

  it('when a return asks more than the order has left unrefunded, then payment.refund_failed.v2 says so and nothing is refunded', async () => {
    const order = await chargedOrder()
    await requestReturnRefund({ orderId: order.orderId, returnId: randomUUID(), amount: 39.98 })
    const tooMuch = randomUUID()
    await requestReturnRefund({ orderId: order.orderId, returnId: tooMuch, amount: 19.99, attempt: 2 })

    const answers = await answersOf(order.orderId)
    expect(answers.map((each) => each.type)).toEqual(['payment.refunded', 'payment.refund_failed.v2'])
    expect(answers[1]).toMatchObject({ source: 'payment' })
    expect(answers[1]?.data).toEqual({
      orderId: order.orderId,
      refundKey: `return-${tooMuch}`,
      reason: "the refund of 19.99 is more than the order's payment has left to refund (5.5)",
      attempt: 2,
    })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 3998 })
    expect(await paymentOf(order.orderId)).toMatchObject({ status: 'succeeded', refundedCents: 3998 })
    expect(await returnRefundsOf(order.orderId)).toHaveLength(1)
  })

  it('when the provider declines refunds, then payment.refund_failed.v2 with its reason and nothing recorded; once it refunds again, the next attempt refunds once', async () => {
    const order = await chargedOrder()
    const returnId = randomUUID()
    provider.setFaults({ refunds: 'decline' })
    const declinedBefore = provider.stats().declinedRefunds
    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 19.99 })

    expect(await answersOf(order.orderId)).toEqual([
      expect.objectContaining({
        type: 'payment.refund_failed.v2',
        data: {
          orderId: order.orderId,
          refundKey: `return-${returnId}`,
          reason: 'The refund was declined by the payment provider.',
          attempt: 1,
        },
      }),
    ])
    expect(provider.stats().declinedRefunds).toBe(declinedBefore + 1)
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 0, refunded: 0 })
    expect(await paymentOf(order.orderId)).toMatchObject({ refundedCents: 0 })
    expect(await returnRefundsOf(order.orderId)).toEqual([])

    provider.setFaults({ refunds: 'succeed' })
    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 19.99, attempt: 2 })
    expect((await answersOf(order.orderId)).map((each) => each.type)).toEqual([
      'payment.refund_failed.v2',
      'payment.refunded',
    ])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 1999 })
  })

  it('when the provider refuses the refund (422 amount_too_large: refunded at the provider outside payment), then payment.refund_failed.v2 names its code and nothing is recorded', async () => {
    const order = await chargedOrder()
    const charge = await paymentOf(order.orderId)
    const outside = await providerRefund(`outside-${randomUUID()}`, {
      charge: charge?.providerChargeId ?? '',
      amount: 4000,
    })
    expect(outside.status).toBe(200)
    const returnId = randomUUID()
    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 19.99 })
    expect((await answersOf(order.orderId)).map((each) => each.data)).toEqual([
      {
        orderId: order.orderId,
        refundKey: `return-${returnId}`,
        reason: 'the payment provider refused the refund (amount_too_large)',
        attempt: 1,
      },
    ])
    expect(await returnRefundsOf(order.orderId)).toEqual([])
    expect(await paymentOf(order.orderId)).toMatchObject({ refundedCents: 0 })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 4000 })
  })

  it('when the provider fails (500), then the handler throws and nothing is written; the next ask refunds once', async () => {
    const order = await chargedOrder()
    const returnId = randomUUID()
    provider.setFaults({ refunds: 'fail' })
    await expect(
      requestReturnRefund({ orderId: order.orderId, returnId, amount: 5.5 }),
    ).rejects.toMatchObject({
      statusCode: 502,
    })
    expect(await answersOf(order.orderId)).toEqual([])
    expect(await returnRefundsOf(order.orderId)).toEqual([])

    provider.setFaults({ refunds: 'succeed' })
    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 5.5, attempt: 2 })
    expect((await answersOf(order.orderId)).map((each) => each.type)).toEqual(['payment.refunded'])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 550 })
  })

  it('when the provider is unreachable, then the refund throws 503 and nothing is written; the next ask refunds once', async () => {
    const order = await chargedOrder()
    const returnId = randomUUID()
    const down = createPaymentProvider({
      secretKey: 'sk_test_meridian',
      apiBase: `http://127.0.0.1:${await closedPort()}`,
      timeoutMs: 1000,
    })
    const deps = {
      payments: createPaymentsRepository(payment.sql),
      keyedRefunds: createKeyedRefundsRepository(payment.sql),
      provider: down,
    }
    const refundKey = `return-${returnId}`
    const request = amountRefundRequest(
      { orderId: order.orderId, reason: 'return', attempt: 1, refundKey, amount: 19.99 },
      refundKey,
    )
    try {
      await expect(transaction(payment.sql, (tx) => refundAmount(deps, request, tx))).rejects.toMatchObject({
        statusCode: 503,
      })
    } finally {
      await down.close()
    }
    expect(await answersOf(order.orderId)).toEqual([])
    expect(await returnRefundsOf(order.orderId)).toEqual([])

    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 19.99, attempt: 2 })
    expect((await answersOf(order.orderId)).map((each) => each.type)).toEqual(['payment.refunded'])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 1999 })
  })

  it('when the provider refunded but the transaction was lost (payment killed mid-return), then the next ask records that refund, not a second one', async () => {
    const order = await chargedOrder()
    const returnId = randomUUID()
    const charge = await paymentOf(order.orderId)
    // what the first attempt sent before its process died, uncommitted
    const lost = await providerRefund(`refund-return-${returnId}`, {
      charge: charge?.providerChargeId ?? '',
      amount: 1999,
    })
    expect(lost.status).toBe(200)

    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 19.99, attempt: 2 })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 1999 })
    const [recorded] = await returnRefundsOf(order.orderId)
    expect(recorded).toMatchObject({ providerRefundId: lost.body.id, amountCents: 1999 })
    expect(await paymentOf(order.orderId)).toMatchObject({ refundedCents: 1999 })
  })

  it('when a return has no amount, or the order was never charged, then payment.refund_failed.v2 says why; the provider is not asked', async () => {
    const order = await chargedOrder()
    const noAmount = randomUUID()
    await requestReturnRefund({ orderId: order.orderId, returnId: noAmount })
    expect((await answersOf(order.orderId)).map((each) => each.data)).toEqual([
      {
        orderId: order.orderId,
        refundKey: `return-${noAmount}`,
        reason: "the refund's amount is not an amount of cents above 0",
        attempt: 1,
      },
    ])

    const never = randomUUID()
    const returnId = randomUUID()
    await requestReturnRefund({ orderId: never, returnId, amount: 10 })
    expect((await answersOf(never)).map((each) => each.data)).toEqual([
      {
        orderId: never,
        refundKey: `return-${returnId}`,
        reason: 'the order has no payment to refund',
        attempt: 1,
      },
    ])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 0 })
  })

  it('when a refund of an amount names no refundKey, then the handler throws (no answer can name it) and nothing is written', async () => {
    const order = await chargedOrder()
    await expect(
      handleRefundRequested({
        orderId: order.orderId,
        reason: 'return',
        attempt: 1,
        amount: 5.5,
      }),
    ).rejects.toThrow(/names its refundKey/)
    expect(await answersOf(order.orderId)).toEqual([])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 0 })
  })

  it('when a refund key refunded for one order comes for another, then payment.refund_failed.v2 for the other; nothing refunded', async () => {
    const first = await chargedOrder()
    const other = await chargedOrder()
    const returnId = randomUUID()
    await requestReturnRefund({ orderId: first.orderId, returnId, amount: 5.5 })
    await requestReturnRefund({ orderId: other.orderId, returnId, amount: 5.5 })
    expect((await answersOf(other.orderId)).map((each) => each.data)).toEqual([
      {
        orderId: other.orderId,
        refundKey: `return-${returnId}`,
        reason: `the refund return-${returnId} was made for another order`,
        attempt: 1,
      },
    ])
    expect(await orderSummary(provider.url, other.orderId)).toMatchObject({ refunds: 0 })
  })
})

describe("a return's refund beside the saga's compensation", () => {
  it('when an order a return refunded in part is compensated, then the rest is refunded exactly and that payment.refunded carries no refund key', async () => {
    const order = await chargedOrder()
    await requestReturnRefund({ orderId: order.orderId, returnId: randomUUID(), amount: 19.99 })
    await requestRefund(payment, order.orderId, 'cancelled by an operator')

    const answers = await answersOf(order.orderId)
    expect(answers.map((each) => each.data)).toEqual([
      expect.objectContaining({ refundKey: expect.stringMatching(/^return-/), amount: 19.99 }),
      {
        orderId: order.orderId,
        paymentId: order.paymentId,
        amount: 25.49,
        reason: 'cancelled by an operator',
      },
    ])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({
      refunds: 2,
      charged: 4548,
      refunded: 4548,
    })
    expect(await paymentOf(order.orderId)).toMatchObject({ status: 'refunded', refundedCents: 4548 })
  })

  it('when a return comes for an order the compensation refunded in full, then payment.refund_failed.v2: the order has no payment to refund', async () => {
    const order = await chargedOrder()
    await requestRefund(payment, order.orderId, 'out of stock')
    const returnId = randomUUID()
    await requestReturnRefund({ orderId: order.orderId, returnId, amount: 5.5 })
    expect((await answersOf(order.orderId)).at(-1)).toMatchObject({
      type: 'payment.refund_failed.v2',
      data: { refundKey: `return-${returnId}`, reason: 'the order has no payment to refund' },
    })
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ refunds: 1, refunded: 4548 })
  })
})

describe('paymentToRefund (pure)', () => {
  const paymentRecord = (
    amountCents: number,
    refundedCents: number,
    providerChargeId: string | null = 'ch_1',
  ) => ({
    id: randomUUID(),
    orderId: 'o',
    payerId: null,
    amountCents,
    currency: 'usd',
    status: 'succeeded' as const,
    providerChargeId,
    brand: null,
    last4: null,
    failureReason: null,
    refundedCents,
    createdAt: new Date(),
    updatedAt: new Date(),
  })

  it('when a payment has enough left, then the oldest such is chosen; when none has, then the decline names the most left', () => {
    const spent = paymentRecord(1000, 900)
    const enough = paymentRecord(1000, 0)
    expect(paymentToRefund([spent, enough], 500)).toEqual({ payment: enough })
    expect(paymentToRefund([spent, enough], 1000)).toEqual({ payment: enough })
    expect(paymentToRefund([spent, enough], 1001)).toEqual({
      declined: "the refund of 10.01 is more than the order's payment has left to refund (10)",
    })
    expect(paymentToRefund([paymentRecord(1000, 0, null)], 1)).toEqual({
      declined: 'the order has no payment to refund',
    })
    expect(paymentToRefund([], 1)).toEqual({ declined: 'the order has no payment to refund' })
  })
})

describe('refundDeclineOf (pure)', () => {
  const answered = (status: number, code?: string, message = 'failed') =>
    new AppError(status === 402 ? 402 : 502, 'PAYMENT_SERVICE_ERROR', {
      message,
      cause: new UpstreamStatusError('payment provider', 'POST', '/v1/refunds', status, code),
    })

  it('when the provider answered a 4xx it will answer again, then it is a decline with its message (402) or code; a passing refusal, a 5xx or no answer is not', () => {
    expect(refundDeclineOf(answered(402, 'refund_declined', 'The refund was declined.'))).toBe(
      'The refund was declined.',
    )
    expect(refundDeclineOf(answered(422, 'charge_already_refunded'))).toBe(
      'the payment provider refused the refund (charge_already_refunded)',
    )
    expect(refundDeclineOf(answered(404))).toBe('the payment provider refused the refund (404)')
    for (const status of [408, 409, 429, 500, 503])
      expect(refundDeclineOf(answered(status)), `${status}`).toBe(undefined)
    expect(refundDeclineOf(new AppError(503, 'SERVICE_UNAVAILABLE', { message: 'down' }))).toBe(undefined)
    expect(refundDeclineOf(new Error('socket hang up'))).toBe(undefined)
  })
})
