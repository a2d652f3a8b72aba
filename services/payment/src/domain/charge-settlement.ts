// What a charge's outcome does to its order, once the provider told it: for a charge of the order step replayed by
// the reconciler, and for a customer's charge (POST /payments, or its replay by the reconciler when the provider did
// not answer in time). Each runs in the caller's transaction under the order's advisory lock. A succeeded charge is
// the order's one charge and moves the order on (payment.processed), or, when the order can no longer use it (its
// refund was requested: cancelled or failed; or it has its charge already), it is refunded at once — a charge never
// sits beside its order.
import { fromMinorUnits } from '@meridian/contracts'
import type { TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { PaymentProvider, ProviderCharge } from '../clients/payment-provider.ts'
import type { ChargeAttempt } from '../data/charge-attempts-repository.ts'
import type { OrdersRepository } from '../data/orders-repository.ts'
import type { PaymentRecord, PaymentsRepository } from '../data/payments-repository.ts'
import { orderToPay, processedData, serviceSource } from './payment-data.ts'

export interface ChargeSettlementDependencies {
  payments: PaymentsRepository
  orders: OrdersRepository
  provider: PaymentProvider
}

export type SettledCharge = {
  /**
   * processed: payment.processed appended (the order is paid by it); refunded: given back at once,
   * payment.refunded appended; settled: recorded already, nothing more to say
   */
  outcome: 'processed' | 'refunded' | 'settled'
  record: PaymentRecord
}

/** The card a customer's declined payment was made with, as the provider told it at tokenization. */
export interface DeclinedCard {
  brand?: string
  last4?: string
}

/** The provider key of the refund of a charge the order cannot use: one per provider charge, stable across retries. */
export const lateRefundKey = (orderId: string, chargeId: string) => `refund-${orderId}-${chargeId}`

/** Why a charge of an order that has its charge already is given back. */
export const secondChargeReason = 'the order was paid by another payment'

/**
 * Refunds a recorded charge in full now, marks it refunded and appends payment.refunded: the order
 * cannot use the charge (cancelled, failed, or paid by another).
 */
async function refundNow(
  deps: ChargeSettlementDependencies,
  record: PaymentRecord,
  chargeId: string,
  reason: string,
  tx: TransactionSql,
): Promise<SettledCharge> {
  const refund = await deps.provider.refund({
    chargeId,
    idempotencyKey: lateRefundKey(record.orderId, chargeId),
  })
  // counted once, even when the provider's webhook told of this refund first (its answer had been lost)
  const refundedCents = await deps.payments.recordOwnRefund(
    record.id,
    { refundId: refund.id, amountCents: refund.amount },
    { whole: true },
    tx,
  )
  const refunded = createEvent(
    'payment.refunded',
    {
      orderId: record.orderId,
      paymentId: record.id,
      amount: fromMinorUnits(refund.amount),
      reason,
    },
    { source: serviceSource },
  )
  await appendToOutbox(tx, refunded, { aggregateId: record.orderId })
  return { outcome: 'refunded', record: { ...record, status: 'refunded', refundedCents } }
}

/**
 * A charge the provider made (its first answer or a replay under the same key): recorded once per provider charge,
 * with the attempt's payer. Then, in this order:
 * - the order has another charge (the one-charge-per-order index turned this one away): refunded now;
 * - it was refunded already: nothing more;
 * - the order's refund was requested (the saga cancelled or failed it): refunded now;
 * - the order was paid by it already (answered): nothing more;
 * - else the order is paid by it: payment.processed with the order's content.
 */
export async function settleCharge(
  deps: ChargeSettlementDependencies,
  attempt: ChargeAttempt,
  charge: ProviderCharge,
  tx: TransactionSql,
): Promise<SettledCharge> {
  const { payments, orders } = deps
  const { orderId } = attempt
  // an order the reconciler replays from before payment recorded orders is known from the attempt's content
  await orders.record(orderToPay(attempt.orderData), tx)
  const charged = {
    orderId,
    payerId: attempt.payerId,
    amountCents: attempt.amountCents,
    currency: attempt.currency,
    status: 'succeeded' as const,
    providerChargeId: charge.id,
    brand: charge.brand,
    last4: charge.last4,
  }
  const record = await payments.recordCharge(charged, tx)
  if (!record) {
    const extra = await payments.insert({ ...charged, orderCharge: false }, tx)
    if (!extra) throw new Error(`charge ${charge.id} of order ${orderId} could not be recorded`)
    return refundNow(deps, extra, charge.id, secondChargeReason, tx)
  }
  if (record.status !== 'succeeded') return { outcome: 'settled', record }

  const refundRequest = await payments.findRefundRequest(orderId, tx)
  if (refundRequest) return refundNow(deps, record, charge.id, refundRequest.reason, tx)
  if (!(await orders.markPaid(orderId, tx))) return { outcome: 'settled', record }
  const processed = createEvent('payment.processed', processedData(attempt.orderData, record.id), {
    source: serviceSource,
  })
  await appendToOutbox(tx, processed, { aggregateId: orderId })
  return { outcome: 'processed', record }
}

/**
 * A charge the provider declined, refused or rate-limited (its first answer or a replay), recorded as a failed
 * payment. For the order step: once, and payment.failed goes out unless the order was answered already or its refund
 * was requested ('failed'; else 'settled'). For a customer's payment: the order stays payment_failed, which the saga
 * knows already: nothing to announce ('failed').
 */
export async function settleDecline(
  deps: ChargeSettlementDependencies,
  attempt: ChargeAttempt,
  reason: string,
  tx: TransactionSql,
  card: DeclinedCard = {},
): Promise<'failed' | 'settled'> {
  const { payments, orders } = deps
  const { orderId } = attempt
  const failed = {
    orderId,
    payerId: attempt.payerId,
    amountCents: attempt.amountCents,
    currency: attempt.currency,
    status: 'failed' as const,
    failureReason: reason,
    ...card,
  }
  if (attempt.payerId !== null) {
    await payments.insert(failed, tx)
    return 'failed'
  }
  const earlier = await payments.findLatestOfOrderStep(orderId, tx)
  if (!earlier) await payments.insert(failed, tx)
  if (earlier || (await payments.refundRequested(orderId, tx))) return 'settled'
  await orders.markPaymentFailed(orderId, tx)
  const event = createEvent('payment.failed', { orderId, reason }, { source: serviceSource })
  await appendToOutbox(tx, event, { aggregateId: orderId })
  return 'failed'
}
