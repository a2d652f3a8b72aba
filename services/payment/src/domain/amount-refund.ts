// A refund of an amount under a key (payment.refund_requested with `amount` and `refundKey`; a return's process asks
// for its returned lines this way): exactly that amount, in integer cents, from the order's charge, once per key
// whatever the attempt. Payment knows the key, not the process that chose it. In the consumer's transaction under the
// order's advisory lock (as the order step's charge and refund): the refund is recorded
// (data/keyed-refunds-repository.ts) with the payment's refunded cents, and answered with payment.refunded carrying
// the request's key back; a refund the provider declines (or one larger than what the order's payments have left) is
// answered with payment.refund_failed.v2, and nothing is recorded. A provider that fails or does not answer makes the
// handler throw: the event goes through the retry topics, and the process asks again later under the same provider
// key, so the refund is made once.
import { type EventData, fromMinorUnits, refundAnswerFields, toMinorUnits } from '@meridian/contracts'
import type { TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import { type PaymentProvider, refundDeclineOf } from '../clients/payment-provider.ts'
import type { KeyedRefundRecord, KeyedRefundsRepository } from '../data/keyed-refunds-repository.ts'
import type { PaymentRecord, PaymentsRepository } from '../data/payments-repository.ts'
import { serviceSource } from './payment-data.ts'

/**
 * The provider's Idempotency-Key of a keyed refund: every attempt sends the same one until the provider declines it;
 * after `declines` known declines the next attempt asks under a new one (the provider replays a key's declined
 * refund). An attempt whose answer was lost counted no decline: it replays the refund that may have been made.
 */
export const providerRefundKey = (refundKey: string, declines = 0) =>
  declines === 0 ? `refund-${refundKey}` : `refund-${refundKey}-${declines}`

export type RefundAmountOutcome =
  /** refunded at the provider now and recorded: payment.refunded appended */
  | { outcome: 'refunded'; paymentId: string; amountCents: number }
  /** the key was refunded already: nothing refunded, payment.refunded appended again from the record */
  | { outcome: 'already refunded'; paymentId: string; amountCents: number }
  /** declined (by the provider, or more than the order's payments have left): payment.refund_failed.v2 appended */
  | { outcome: 'declined'; reason: string }

export interface AmountRefundDependencies {
  payments: PaymentsRepository
  keyedRefunds: KeyedRefundsRepository
  provider: PaymentProvider
}

/** What a keyed refund's request says: its key, its amount in cents (undefined: not an amount), and its answer's fields. */
export interface AmountRefundRequest {
  orderId: string
  refundKey: string
  reason: string
  attempt: number
  amountCents: number | undefined
  /** what payment.refunded carries back of the request, unread here (refundAnswerFields) */
  answerFields: ReturnType<typeof refundAnswerFields>
}

/** The refund request a payment.refund_requested of an amount is, under its key (read by the catalogue: refundAsked). */
export function amountRefundRequest(
  data: EventData<'payment.refund_requested'>,
  refundKey: string,
): AmountRefundRequest {
  return {
    orderId: data.orderId,
    refundKey,
    reason: data.reason,
    attempt: data.attempt,
    amountCents: data.amount === undefined ? undefined : toMinorUnits(data.amount),
    answerFields: refundAnswerFields(data),
  }
}

/** The payment a refund of `amountCents` is taken from (the oldest paid one with enough left), or why none can be. */
export function paymentToRefund(
  succeeded: readonly PaymentRecord[],
  amountCents: number,
): { payment: PaymentRecord } | { declined: string } {
  const paid = succeeded.filter((payment) => payment.providerChargeId !== null)
  if (paid.length === 0) return { declined: 'the order has no payment to refund' }
  const left = (payment: PaymentRecord) => payment.amountCents - payment.refundedCents
  const payment = paid.find((each) => left(each) >= amountCents)
  if (payment) return { payment }
  const most = Math.max(...paid.map(left))
  return {
    declined: `the refund of ${fromMinorUnits(amountCents)} is more than the order's payment has left to refund (${fromMinorUnits(most)})`,
  }
}

/** payment.refunded for the key's recorded refund, with the request's fields carried back. */
async function answerRefunded(
  request: AmountRefundRequest,
  refund: Pick<KeyedRefundRecord, 'paymentId' | 'amountCents'>,
  tx: TransactionSql,
): Promise<void> {
  const refunded = createEvent(
    'payment.refunded',
    {
      orderId: request.orderId,
      paymentId: refund.paymentId,
      amount: fromMinorUnits(refund.amountCents),
      reason: request.reason,
      ...request.answerFields,
    },
    { source: serviceSource },
  )
  await appendToOutbox(tx, refunded, { aggregateId: request.orderId })
}

/** payment.refund_failed.v2 for the key: nothing was refunded. */
async function answerDeclined(
  request: AmountRefundRequest,
  reason: string,
  tx: TransactionSql,
): Promise<RefundAmountOutcome> {
  const failed = createEvent(
    'payment.refund_failed.v2',
    { orderId: request.orderId, refundKey: request.refundKey, reason, attempt: request.attempt },
    { source: serviceSource },
  )
  await appendToOutbox(tx, failed, { aggregateId: request.orderId })
  return { outcome: 'declined', reason }
}

/**
 * A keyed refund, in the consumer's transaction. Under the order's advisory lock, with the key's refund record and
 * the order's succeeded payments read:
 * - the key was refunded already (an attempt after the first, or the same event again): payment.refunded again
 *   from the record, nothing refunded (a record of another order: payment.refund_failed.v2);
 * - the amount is missing or not an amount of cents, the order has no paid payment, or the amount is more than its
 *   payment has left unrefunded: payment.refund_failed.v2 saying so, the provider is not called;
 * - else exactly that amount of the payment's charge is refunded at the provider under `refund-<refundKey>` (with
 *   `-<n>` after n declines: providerRefundKey), recorded with the payment's refunded cents, and payment.refunded
 *   appended. A 4xx the provider will answer again (declined, amount too large, charge not refundable) counts a
 *   decline and appends payment.refund_failed.v2 with its reason; any other failure (unavailable, timed out, 5xx,
 *   409, 429) throws, so the event is retried and nothing is written.
 */
export async function refundAmount(
  deps: AmountRefundDependencies,
  request: AmountRefundRequest,
  tx: TransactionSql,
): Promise<RefundAmountOutcome> {
  const { payments, keyedRefunds, provider } = deps
  // the lock and the two reads go out together, run in this order
  const [, { recorded, declines }, succeeded] = await Promise.all([
    payments.lockOrder(request.orderId, tx),
    keyedRefunds.refundStateOf(request.refundKey, tx),
    payments.lockSucceededOfOrder(request.orderId, tx),
  ])
  if (recorded) {
    if (recorded.orderId !== request.orderId)
      return answerDeclined(request, `the refund ${request.refundKey} was made for another order`, tx)
    await answerRefunded(request, recorded, tx)
    return { outcome: 'already refunded', paymentId: recorded.paymentId, amountCents: recorded.amountCents }
  }
  const { amountCents } = request
  if (amountCents === undefined || amountCents === 0)
    return answerDeclined(request, "the refund's amount is not an amount of cents above 0", tx)
  const chosen = paymentToRefund(succeeded, amountCents)
  if ('declined' in chosen) return answerDeclined(request, chosen.declined, tx)
  const { payment } = chosen

  let refund: Awaited<ReturnType<PaymentProvider['refund']>>
  try {
    refund = await provider.refund({
      chargeId: payment.providerChargeId ?? '',
      amountCents,
      idempotencyKey: providerRefundKey(request.refundKey, declines),
    })
  } catch (error) {
    const declined = refundDeclineOf(error)
    if (declined === undefined) throw error
    await keyedRefunds.recordDecline(request.refundKey, tx)
    return answerDeclined(request, declined, tx)
  }
  const record = await keyedRefunds.record(
    {
      refundKey: request.refundKey,
      orderId: request.orderId,
      paymentId: payment.id,
      amountCents: refund.amount,
      providerRefundId: refund.id,
    },
    tx,
  )
  await answerRefunded(request, record, tx)
  return { outcome: 'refunded', paymentId: record.paymentId, amountCents: record.amountCents }
}
