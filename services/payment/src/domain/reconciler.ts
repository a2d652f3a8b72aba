// The charge reconciler: settles the order step's charges whose outcome was left unknown (the provider did not answer
// in time, so the consumer's transaction rolled back while the provider may still charge). Each round takes the
// pending charge attempts (data/charge-attempts-repository.ts) made at least `afterMs` ago and, one order at a time
// in a transaction of its own under the order's advisory lock (an order another process holds is skipped for this
// round), replays the charge at the provider with the same Idempotency-Key and parameters: the provider answers the
// first call's outcome.
// - succeeded: the payment is recorded (once per provider charge); when the order's refund was requested meanwhile
//   (the saga compensated: payment.refund_requested found nothing to refund), the late charge is refunded at once and
//   payment.refunded appended; else, when the order got no answer yet, payment.processed is appended (the saga
//   waits for it). The attempt is settled.
// - declined (402), refused (422) or rate-limited (429): the failed payment is recorded, payment.failed appended
//   unless the refund was requested or the order was answered already; settled.
// - still running at the provider (409 idempotency_in_progress), unavailable (503) or failing (502): left pending for
//   a later round. A call that never reached the provider charges now: it is handled as above.
// Each reconciliation is logged at info with its orderId (never the token) and counted by outcome.
import { AppError, fromMinorUnits } from '@meridian/contracts'
import { type Sql, type TransactionSql, transaction } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { ChargeAttempt, ChargeAttemptsRepository } from '../data/charge-attempts-repository.ts'
import type { PaymentProvider, ProviderCharge } from '../data/payment-provider.ts'
import type { PaymentsRepository } from '../data/payments-repository.ts'
import { definitiveChargeFailures, processedData, serviceSource } from './payments.ts'

export type ReconcileOutcome =
  /** the late charge was refunded (the order's refund had been requested): payment.refunded appended */
  | 'refunded'
  /** the charge succeeded and the saga still waited: payment.processed appended */
  | 'processed'
  /** the charge was declined or refused: payment.failed appended */
  | 'failed'
  /** the outcome is recorded, no event was due (the order was answered already, or refunded already) */
  | 'settled'
  /** the provider did not tell the outcome yet (still running, unavailable, failing): left for a later round */
  | 'pending'
  /** another process holds the order (a charge or a refund of it is running), or the attempt was settled meanwhile */
  | 'skipped'
  /** the round failed on this attempt (e.g. the refund call timed out): nothing committed, a later round retries */
  | 'error'

export interface Reconciliation {
  orderId: string
  outcome: ReconcileOutcome
  paymentId?: string
  /** why it stays pending, or the decline's reason */
  detail?: string
}

export interface ReconcilerLogger {
  info(object: object, message: string): void
  debug(object: object, message: string): void
  warn(object: object, message: string): void
}

export interface ChargeReconcilerDependencies {
  sql: Sql
  payments: PaymentsRepository
  chargeAttempts: ChargeAttemptsRepository
  provider: PaymentProvider
  logger: ReconcilerLogger
  /** an attempt is reconciled once it is at least this old, ms (PAYMENT_RECONCILE_AFTER_MS) */
  afterMs: number
  /** at most this many attempts a round */
  batchSize?: number
  /** counts each reconciliation by outcome (meridian_payment_reconciled_total) */
  counter?: { inc(labels: { outcome: ReconcileOutcome }): void }
}

/** The provider key of the refund of a late charge: one per provider charge, stable across retried rounds. */
export const lateRefundKey = (orderId: string, chargeId: string) => `refund-${orderId}-${chargeId}`

export function createChargeReconciler(deps: ChargeReconcilerDependencies) {
  const { sql, payments, chargeAttempts, provider, logger } = deps
  const batchSize = deps.batchSize ?? 50

  /** The recorded outcome of a replayed successful charge, under the order's lock in `tx`. */
  async function succeeded(
    attempt: ChargeAttempt,
    charge: ProviderCharge,
    tx: TransactionSql,
  ): Promise<Reconciliation> {
    const { orderId } = attempt
    // an order-step payment recorded before this one means the order was answered (processed or failed)
    const answered = (await payments.findLatestOfOrderStep(orderId, tx)) !== undefined
    const record = await payments.recordCharge(
      {
        orderId,
        amountCents: attempt.amountCents,
        currency: attempt.currency,
        status: 'succeeded',
        providerChargeId: charge.id,
        brand: charge.brand,
        last4: charge.last4,
      },
      tx,
    )

    const refundRequest = await payments.findRefundRequest(orderId, tx)
    if (refundRequest) {
      if (record.status !== 'succeeded') return { orderId, outcome: 'settled', paymentId: record.id }
      // the saga compensated while the charge was unknown: the charge it never heard of is refunded now
      const refund = await provider.refund({
        chargeId: charge.id,
        idempotencyKey: lateRefundKey(orderId, charge.id),
      })
      await payments.markRefunded(record.id, record.refundedCents + refund.amount, tx)
      const refunded = createEvent(
        'payment.refunded',
        {
          orderId,
          paymentId: record.id,
          amount: fromMinorUnits(refund.amount),
          reason: refundRequest.reason,
        },
        { source: serviceSource },
      )
      await appendToOutbox(tx, refunded, { aggregateId: orderId })
      return { orderId, outcome: 'refunded', paymentId: record.id }
    }
    if (answered) return { orderId, outcome: 'settled', paymentId: record.id }
    const processed = createEvent('payment.processed', processedData(attempt.orderData, record.id), {
      source: serviceSource,
    })
    await appendToOutbox(tx, processed, { aggregateId: orderId })
    return { orderId, outcome: 'processed', paymentId: record.id }
  }

  /** The recorded outcome of a replayed charge that the provider declined or refused. */
  async function declined(
    attempt: ChargeAttempt,
    reason: string,
    tx: TransactionSql,
  ): Promise<Reconciliation> {
    const { orderId } = attempt
    const earlier = await payments.findLatestOfOrderStep(orderId, tx)
    if (!earlier) {
      await payments.insert(
        {
          orderId,
          amountCents: attempt.amountCents,
          currency: attempt.currency,
          status: 'failed',
          failureReason: reason,
        },
        tx,
      )
    }
    if (earlier || (await payments.refundRequested(orderId, tx)))
      return { orderId, outcome: 'settled', detail: reason }
    const failed = createEvent('payment.failed', { orderId, reason }, { source: serviceSource })
    await appendToOutbox(tx, failed, { aggregateId: orderId })
    return { orderId, outcome: 'failed', detail: reason }
  }

  /** One attempt, in a transaction of its own under the order's advisory lock. */
  function reconcileAttempt(due: ChargeAttempt): Promise<Reconciliation> {
    return transaction(sql, async (tx) => {
      const { orderId } = due
      if (!(await payments.tryLockOrder(orderId, tx)))
        return { orderId, outcome: 'skipped', detail: 'locked' }
      const attempt = await chargeAttempts.lockPending(due.idempotencyKey, tx)
      if (!attempt) return { orderId, outcome: 'skipped', detail: 'settled meanwhile' }
      await chargeAttempts.markChecked(attempt.idempotencyKey, tx)
      let charge: ProviderCharge
      try {
        charge = await provider.charge({
          amountCents: attempt.amountCents,
          currency: attempt.currency,
          orderId,
          token: attempt.token,
          idempotencyKey: attempt.idempotencyKey,
        })
      } catch (error) {
        if (error instanceof AppError && definitiveChargeFailures.includes(error.statusCode)) {
          const result = await declined(attempt, error.message, tx)
          await chargeAttempts.settle(attempt.idempotencyKey, tx)
          return result
        }
        // still running at the provider (409), unavailable (503) or failing (502): asked again next round
        return { orderId, outcome: 'pending', detail: error instanceof Error ? error.message : String(error) }
      }
      const result = await succeeded(attempt, charge, tx)
      await chargeAttempts.settle(attempt.idempotencyKey, tx)
      return result
    })
  }

  function report(result: Reconciliation): void {
    const { orderId, outcome, paymentId, detail } = result
    const fields = { orderId, outcome, ...(paymentId ? { paymentId } : {}), ...(detail ? { detail } : {}) }
    if (outcome === 'skipped') {
      logger.debug(fields, 'charge reconciliation skipped')
      return
    }
    deps.counter?.inc({ outcome })
    if (outcome === 'pending') logger.debug(fields, 'charge outcome still unknown: left pending')
    else if (outcome === 'error') logger.warn(fields, 'charge reconciliation failed: a later round retries')
    else logger.info(fields, `charge reconciled: ${outcome}`)
  }

  return {
    /**
     * One round: every pending attempt at least `olderThanMs` old (default `afterMs`), up to the batch size, least
     * recently checked first. Answers each attempt's reconciliation; one attempt's failure does not stop the round.
     */
    async reconcile({
      olderThanMs = deps.afterMs,
    }: {
      olderThanMs?: number
    } = {}): Promise<Reconciliation[]> {
      const results: Reconciliation[] = []
      for (const due of await chargeAttempts.listDue(olderThanMs, batchSize)) {
        let result: Reconciliation
        try {
          result = await reconcileAttempt(due)
        } catch (error) {
          result = {
            orderId: due.orderId,
            outcome: 'error',
            detail: error instanceof Error ? error.message : String(error),
          }
        }
        report(result)
        results.push(result)
      }
      return results
    },
  }
}

export type ChargeReconciler = ReturnType<typeof createChargeReconciler>
