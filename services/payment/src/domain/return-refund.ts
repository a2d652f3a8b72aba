// A return's refund (payment.refund_requested with cause 'return', from the order service's returns process): exactly
// the returned lines' amount, in integer cents, from the order's charge, once per return whatever the attempt. In the
// consumer's transaction under the order's advisory lock (as the order step's charge and refund): the refund is
// recorded (data/return-refunds-repository.ts) with the payment's refunded cents, and answered with payment.refunded
// {cause: 'return', returnId}; a refund the provider declines (or one larger than what the order's payments have
// left) is answered with payment.refund_failed, and nothing is recorded. A provider that fails or does not answer
// makes the handler throw: the event goes through the retry topics, and the process asks again later under the same
// provider key, so the refund is made once.
import { type EventData, fromMinorUnits, toMinorUnits } from '@meridian/contracts'
import type { TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent, InvalidEventError } from '@meridian/events'
import { type PaymentProvider, refundDeclineOf } from '../clients/payment-provider.ts'
import type { PaymentRecord, PaymentsRepository } from '../data/payments-repository.ts'
import type { ReturnRefundRecord, ReturnRefundsRepository } from '../data/return-refunds-repository.ts'
import { serviceSource } from './payment-data.ts'

/**
 * The provider's Idempotency-Key of a return's refund: every attempt sends the same one until the provider declines
 * it; after `declines` known declines the next attempt asks under a new one (the provider replays a key's declined
 * refund). An attempt whose answer was lost counted no decline: it replays the refund that may have been made.
 */
export const returnRefundKey = (returnId: string, declines = 0) =>
  declines === 0 ? `refund-return-${returnId}` : `refund-return-${returnId}-${declines}`

export type RefundReturnOutcome =
  /** refunded at the provider now and recorded: payment.refunded appended */
  | { outcome: 'refunded'; paymentId: string; amountCents: number }
  /** the return was refunded already: nothing refunded, payment.refunded appended again from the record */
  | { outcome: 'already refunded'; paymentId: string; amountCents: number }
  /** declined (by the provider, or more than the order's payments have left): payment.refund_failed appended */
  | { outcome: 'declined'; reason: string }

export interface ReturnRefundDependencies {
  payments: PaymentsRepository
  returnRefunds: ReturnRefundsRepository
  provider: PaymentProvider
}

/** What a return's refund request says, checked: the return and its amount in cents (undefined: not an amount). */
interface ReturnRefundRequest {
  orderId: string
  returnId: string
  reason: string
  attempt: number
  amountCents: number | undefined
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

/** The return's refund request in the command; a command without its return cannot be answered at all. */
function returnRefundRequest(data: EventData<'payment.refund_requested'>): ReturnRefundRequest {
  if (data.returnId === undefined)
    throw new InvalidEventError(
      `payment.refund_requested of order ${data.orderId}: a return's refund names its returnId`,
    )
  return {
    orderId: data.orderId,
    returnId: data.returnId,
    reason: data.reason,
    attempt: data.attempt,
    amountCents: data.amount === undefined ? undefined : toMinorUnits(data.amount),
  }
}

/** payment.refunded for the return's recorded refund. */
async function answerRefunded(
  request: ReturnRefundRequest,
  refund: Pick<ReturnRefundRecord, 'paymentId' | 'amountCents'>,
  tx: TransactionSql,
): Promise<void> {
  const refunded = createEvent(
    'payment.refunded',
    {
      orderId: request.orderId,
      paymentId: refund.paymentId,
      amount: fromMinorUnits(refund.amountCents),
      reason: request.reason,
      cause: 'return',
      returnId: request.returnId,
    },
    { source: serviceSource },
  )
  await appendToOutbox(tx, refunded, { aggregateId: request.orderId })
}

/** payment.refund_failed for the return: nothing was refunded. */
async function answerDeclined(
  request: ReturnRefundRequest,
  reason: string,
  tx: TransactionSql,
): Promise<RefundReturnOutcome> {
  const failed = createEvent(
    'payment.refund_failed',
    {
      orderId: request.orderId,
      returnId: request.returnId,
      reason,
      cause: 'return',
      attempt: request.attempt,
    },
    { source: serviceSource },
  )
  await appendToOutbox(tx, failed, { aggregateId: request.orderId })
  return { outcome: 'declined', reason }
}

/**
 * A return's refund, in the consumer's transaction. Under the order's advisory lock, with the return's refund record
 * and the order's succeeded payments read:
 * - the return was refunded already (an attempt after the first, or the same event again): payment.refunded again
 *   from the record, nothing refunded (a record of another order: payment.refund_failed);
 * - the amount is missing or not an amount of cents, the order has no paid payment, or the amount is more than its
 *   payment has left unrefunded: payment.refund_failed saying so, the provider is not called;
 * - else exactly that amount of the payment's charge is refunded at the provider under `refund-return-<returnId>`
 *   (with `-<n>` after n declines: returnRefundKey),
 *   recorded with the payment's refunded cents, and payment.refunded appended. A 4xx the provider will answer again
 *   (declined, amount too large, charge not refundable) counts a decline and appends payment.refund_failed with its
 *   reason; any other
 *   failure (unavailable, timed out, 5xx, 409, 429) throws, so the event is retried and nothing is written.
 */
export async function refundReturn(
  deps: ReturnRefundDependencies,
  data: EventData<'payment.refund_requested'>,
  tx: TransactionSql,
): Promise<RefundReturnOutcome> {
  const { payments, returnRefunds, provider } = deps
  const request = returnRefundRequest(data)
  // the lock and the two reads go out together, run in this order
  const [, { recorded, declines }, succeeded] = await Promise.all([
    payments.lockOrder(request.orderId, tx),
    returnRefunds.refundStateOf(request.returnId, tx),
    payments.lockSucceededOfOrder(request.orderId, tx),
  ])
  if (recorded) {
    if (recorded.orderId !== request.orderId)
      return answerDeclined(request, `return ${request.returnId} was refunded for another order`, tx)
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
      idempotencyKey: returnRefundKey(request.returnId, declines),
    })
  } catch (error) {
    const declined = refundDeclineOf(error)
    if (declined === undefined) throw error
    await returnRefunds.recordDecline(request.returnId, tx)
    return answerDeclined(request, declined, tx)
  }
  const record = await returnRefunds.record(
    {
      returnId: request.returnId,
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
