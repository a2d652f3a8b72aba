// The payment step of the order saga: charging a placed order (order.placed, and payment.requested when the saga
// asks again) and refunding it when the saga compensates (payment.refund_requested). Each runs in the consumer's
// transaction under the order's advisory lock, so a charge and a refund of one order — and a customer's payment of it
// (customer-payments.ts) — never interleave. A charge is recorded as a charge attempt before the provider is called,
// outside the consumer's transaction (on a pool of its own, `autonomous`), so that a charge whose outcome is unknown (the provider timed out) is found
// and settled later by the charge reconciler (reconciler.ts). Each also keeps payment's record of the order
// (data/orders-repository.ts) and where its payment stands.
import { AppError, type EventData, fromMinorUnits, toMinorUnits } from '@meridian/contracts'
import type { Sql, TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { ChargeAnswer, PaymentProvider } from '../clients/payment-provider.ts'
import type { ChargeAttemptsRepository } from '../data/charge-attempts-repository.ts'
import type { OrdersRepository } from '../data/orders-repository.ts'
import type { PaymentsRepository } from '../data/payments-repository.ts'
import { awaitAuthentication, continueAuthentication } from './authentication.ts'
import {
  chargedOrderData,
  defaultCurrency,
  definitiveChargeFailures,
  orderCancelled,
  orderToPay,
  processedData,
  serviceSource,
} from './payment-data.ts'

/** Reason of payment.failed when order.placed carries no payment method. */
export const noPaymentMethod = 'no payment method'

/** The provider's Idempotency-Key of the order step's charge: every charge of the order step sends it. */
export const orderChargeKey = (orderId: string) => `order-${orderId}`

/** An order.placed event's payment token (its `payment.token`), if any. */
export function paymentTokenOf(data: EventData<'order.placed'>): string | undefined {
  return data.payment?.token
}

export type ChargeOrderOutcome =
  | { outcome: 'processed'; paymentId: string }
  /** payment.failed was appended: declined, no payment method, or the order's refund was requested */
  | { outcome: 'failed'; reason: string }
  /** the order was charged already: nothing charged, payment.processed appended again with the same paymentId */
  | { outcome: 'already processed'; paymentId: string }
  /** the order's charge was declined already: nothing charged, payment.failed appended again with its reason */
  | { outcome: 'already failed'; reason: string }
  /** the card asks the customer to authenticate the charge: payment.action_required appended (again) */
  | { outcome: 'action required' }

export type RefundOrderOutcome =
  | { outcome: 'refunded'; paymentIds: string[] }
  /** no succeeded payment (never charged, or refunded already): payment.refunded with amount 0, no paymentId */
  | { outcome: 'nothing to refund' }

export interface OrderStepDependencies {
  payments: PaymentsRepository
  orders: OrdersRepository
  chargeAttempts: ChargeAttemptsRepository
  provider: PaymentProvider
  /** how long the customer has to authenticate a charge (3-D Secure), ms */
  authenticationTimeoutMs: number
  /**
   * A pool of its own for the writes that must outlive the transaction that makes them (the charge attempt, the
   * order's record): that transaction holds the order's advisory lock, and the transactions waiting for the lock hold
   * connections of the main pool — a write there could wait for them while they wait for it, a deadlock PostgreSQL
   * cannot see. Its statements wait for no lock a transaction holds, so its few connections always come free.
   */
  autonomous: Sql
}

/** payment.failed for the order: the order awaits a payment (the customer may pay it). */
async function answerFailed(
  deps: OrderStepDependencies,
  orderId: string,
  reason: string,
  tx: TransactionSql,
): Promise<void> {
  const failed = createEvent('payment.failed', { orderId, reason }, { source: serviceSource })
  // two writes that need nothing of each other: sent together, applied in this order
  await Promise.all([
    deps.orders.markPaymentFailed(orderId, tx),
    appendToOutbox(tx, failed, { aggregateId: orderId }),
  ])
}

/** payment.processed for the order with the payment that paid it, appended (the order is marked paid already). */
async function announceProcessed(
  data: EventData<'order.placed'>,
  paymentId: string,
  tx: TransactionSql,
): Promise<void> {
  const processed = createEvent('payment.processed', processedData(chargedOrderData(data), paymentId), {
    source: serviceSource,
  })
  await appendToOutbox(tx, processed, { aggregateId: data.orderId })
}

/** payment.processed for the order with the payment that paid it. */
async function answerProcessed(
  deps: OrderStepDependencies,
  data: EventData<'order.placed'>,
  paymentId: string,
  tx: TransactionSql,
): Promise<void> {
  // two writes that need nothing of each other: sent together, applied in this order
  await Promise.all([deps.orders.markPaid(data.orderId, tx), announceProcessed(data, paymentId, tx)])
}

/**
 * The payment step, in the consumer's transaction: order.placed, and payment.requested (the saga asking again after
 * a timeout). Every call answers with an event. Under the order's advisory lock (a refund or a customer's payment of
 * the order waits for it, and it for them), with the order recorded (its customer, what is due):
 * - the order's refund was requested already (payment.refund_requested came first): no charge, payment.failed
 *   'the order was cancelled';
 * - the order has its charge (the order step's, or a customer's POST /payments): payment.processed again with that
 *   paymentId, or payment.failed 'the order was cancelled' when it was refunded;
 * - the order step's charge was declined already: payment.failed again with the stored reason (the provider is not
 *   called again);
 * - else the order's total is charged with its payment token under the provider key `order-<orderId>` (a retry
 *   after a timeout never charges twice), the payment recorded and payment.processed appended (the order.placed
 *   data plus paymentId). A decline (402), a refused method (422) or the provider's rate limit (429, which it
 *   replays for that key) records a failed payment and appends payment.failed; no token appends payment.failed
 *   'no payment method'. An unavailable or failing provider (503 / 502) throws, so the event is retried and
 *   finally dead-lettered.
 * Right before the provider is called, the charge attempt (key, amount, currency, token, order content) is recorded
 * pending through the pool, outside `tx`: it outlives the rollback of a call that throws (its outcome unknown: the
 * provider may charge later). A definitive outcome (succeeded, declined, refused) settles it in `tx`; one left
 * pending is the charge reconciler's (reconciler.ts).
 */
export async function chargeOrder(
  deps: OrderStepDependencies,
  data: EventData<'order.placed'>,
  tx: TransactionSql,
): Promise<ChargeOrderOutcome> {
  const { payments, chargeAttempts, provider } = deps
  const { orderId } = data
  const fail = async (reason: string, outcome: 'failed' | 'already failed' = 'failed') => {
    await answerFailed(deps, orderId, reason, tx)
    return { outcome, reason } satisfies ChargeOrderOutcome
  }
  const succeed = async (paymentId: string, outcome: 'processed' | 'already processed' = 'processed') => {
    await answerProcessed(deps, data, paymentId, tx)
    return { outcome, paymentId } satisfies ChargeOrderOutcome
  }

  const idempotencyKey = orderChargeKey(orderId)
  // the order's lock and what the step reads under it go out together (the read runs once the lock is held)
  const [, standing] = await Promise.all([
    payments.lockOrder(orderId, tx),
    payments.findOrderStepStanding(orderId, tx),
  ])
  // on the autonomous pool, not in tx: the order is known (pending) to POST /payments while its charge is at the
  // provider, and stays known when tx rolls back; with the charge attempt, when there is a charge to make, in one
  // statement. Only when it is not recorded yet: tx may have written its row already (the consumer applies a run of
  // events in one transaction, and an earlier event of the same order answered it), and an autonomous write of that
  // row would wait for tx while tx waits for it.
  const order = orderToPay(chargedOrderData(data))
  const recordOrder = async () => {
    if (!standing.recorded) await deps.orders.record(order, deps.autonomous)
  }
  const refuse = async (reason: string, outcome?: 'failed' | 'already failed') => {
    await recordOrder()
    return fail(reason, outcome)
  }
  if (standing.refundRequested) return refuse(orderCancelled)
  const charged = standing.charge
  if (charged?.status === 'succeeded') {
    await recordOrder()
    return succeed(charged.id, 'already processed')
  }
  if (charged?.status === 'refunded') return refuse(orderCancelled)
  const earlier = standing.latestOfOrderStep
  if (earlier?.status === 'failed') return refuse(earlier.failureReason ?? 'payment failed', 'already failed')

  // the charge waits for the customer's authentication: where it stands now (settled once it is known)
  const attempt = standing.authenticating ? await chargeAttempts.findByKey(idempotencyKey, tx) : undefined
  if (attempt?.status === 'authenticating') {
    const outcome = await continueAuthentication(deps, attempt, tx, { announceWaiting: true })
    if (outcome === 'waiting') return { outcome: 'action required' }
    const processedNow = outcome === 'processed'
    const answered = processedNow ? await payments.findChargeOfOrder(orderId, tx) : undefined
    if (processedNow && answered) return { outcome: 'processed', paymentId: answered.id }
    // failed: payment.failed was appended with the reason (refunded or settled: the order cannot be charged)
    const latest = await payments.findLatestOfOrderStep(orderId, tx)
    return { outcome: 'failed', reason: latest?.failureReason ?? orderCancelled }
  }

  const amountCents = toMinorUnits(data.total)
  if (amountCents === undefined || amountCents === 0) return refuse('invalid order total')
  const token = paymentTokenOf(data)
  if (!token) return refuse(noPaymentMethod)

  // on the autonomous pool, not in tx: the attempt stays when tx rolls back (a timeout leaves its outcome unknown).
  // tx has not written it: an earlier event of the order in tx that reached the provider left a charge, a failed
  // payment or an authenticating attempt, each answered above.
  const newAttempt = {
    idempotencyKey,
    orderId,
    amountCents,
    currency: defaultCurrency,
    token,
    orderData: chargedOrderData(data),
  }
  if (standing.recorded) await chargeAttempts.record(newAttempt, deps.autonomous)
  else await chargeAttempts.recordWithOrder(newAttempt, order, deps.autonomous)
  let answer: ChargeAnswer
  try {
    answer = await provider.chargeOrAuthenticate({
      amountCents,
      currency: defaultCurrency,
      orderId,
      token,
      idempotencyKey,
    })
  } catch (error) {
    // declined, rate-limited, or a payment method the provider refuses: the order's payment failed
    if (error instanceof AppError && definitiveChargeFailures.includes(error.statusCode)) {
      await Promise.all([
        payments.insert(
          { orderId, amountCents, currency: defaultCurrency, status: 'failed', failureReason: error.message },
          tx,
        ),
        chargeAttempts.settle(idempotencyKey, tx),
      ])
      return fail(error.message)
    }
    throw error
  }
  if (answer.kind === 'authenticate') {
    await awaitAuthentication(deps, { idempotencyKey, orderId }, answer, tx)
    return { outcome: 'action required' }
  }
  const charge = answer.charge
  const record = await payments.recordOrderCharge(
    {
      orderId,
      amountCents,
      currency: defaultCurrency,
      status: 'succeeded',
      providerChargeId: charge.id,
      brand: charge.brand,
      last4: charge.last4,
    },
    idempotencyKey,
    tx,
  )
  // the order's charge was looked up under the lock: another one cannot have come in between
  if (!record) throw new Error(`charge ${charge.id} would be a second charge of order ${orderId}`)
  // the provider replayed a charge recorded already (the lookups above missed it): answer with it
  if (record.status === 'refunded') return fail(orderCancelled)
  // recorded succeeded: the same statement marked the order paid
  await announceProcessed(data, record.id, tx)
  return { outcome: 'processed', paymentId: record.id }
}

/**
 * The saga's compensation (payment.refund_requested), in the consumer's transaction, under the order's advisory lock
 * (a charge in flight is waited for, then refunded): the request is recorded (a later charge of the order is not
 * made, and POST /payments refuses it), each succeeded payment of the order is refunded in full at the provider (key
 * `refund-<orderId>` for the order's first refund, `refund-<orderId>-<paymentId>` for any further payment), marked
 * refunded, and payment.refunded is appended for it. It always answers: with no succeeded
 * payment left (never charged, or refunded already) one payment.refunded without paymentId and with amount 0 is
 * appended. A payment a return refunded in part is refunded for the rest (the provider's whole unrefunded rest).
 */
export async function refundOrder(
  deps: Pick<OrderStepDependencies, 'payments' | 'provider'>,
  order: { orderId: string; reason: string },
  tx: TransactionSql,
): Promise<RefundOrderOutcome> {
  const { payments, provider } = deps
  // the lock, the request and the read of what to refund go out together, run in this order
  const [, , succeeded] = await Promise.all([
    payments.lockOrder(order.orderId, tx),
    payments.recordRefundRequest(order.orderId, order.reason, tx),
    payments.lockSucceededOfOrder(order.orderId, tx),
  ])
  const paid = succeeded.filter((payment) => payment.providerChargeId !== null)
  if (paid.length === 0) {
    const nothing = createEvent(
      'payment.refunded',
      { orderId: order.orderId, amount: 0, reason: order.reason },
      { source: serviceSource },
    )
    await appendToOutbox(tx, nothing, { aggregateId: order.orderId })
    return { outcome: 'nothing to refund' }
  }
  // the order's first refund takes the key `refund-<orderId>`; a payment refunded after it (charged before the rule
  // of one charge per order) its own
  let firstKeyTaken = await payments.hasRefunded(order.orderId, tx)
  for (const payment of paid) {
    const refund = await provider.refund({
      chargeId: payment.providerChargeId ?? '',
      idempotencyKey: firstKeyTaken ? `refund-${order.orderId}-${payment.id}` : `refund-${order.orderId}`,
    })
    firstKeyTaken = true
    // counted once, even when the provider's webhook told of this refund first (its answer had been lost)
    await payments.recordOwnRefund(
      payment.id,
      { refundId: refund.id, amountCents: refund.amount },
      { whole: true },
      tx,
    )
    const refunded = createEvent(
      'payment.refunded',
      {
        orderId: order.orderId,
        paymentId: payment.id,
        amount: fromMinorUnits(refund.amount),
        reason: order.reason,
      },
      { source: serviceSource },
    )
    await appendToOutbox(tx, refunded, { aggregateId: order.orderId })
  }
  return { outcome: 'refunded', paymentIds: paid.map((payment) => payment.id) }
}
