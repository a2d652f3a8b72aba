// The charge reconciler: settles the charges whose outcome was left unknown (the provider did not answer in time, so
// the transaction rolled back while the provider may still charge): the order step's, and customers' (POST
// /payments). Each round takes the pending charge attempts (data/charge-attempts-repository.ts) made at least
// `afterMs` ago and, one order at a time in a transaction of its own under the order's advisory lock (an order
// another process holds is skipped for this round), replays the charge at the provider with the same
// Idempotency-Key and parameters: the provider answers the first call's outcome. What the outcome does to the order
// is charge-settlement.ts':
// - succeeded: the payment is recorded (once per provider charge); when the order's refund was requested meanwhile
//   (the saga compensated: payment.refund_requested found nothing to refund), or the order has another charge, the
//   late charge is refunded at once and payment.refunded appended; else, when the order is not paid yet,
//   payment.processed is appended (the saga waits for it, or goes on from payment_failed). The attempt is settled.
// - declined (402), refused (422) or rate-limited (429): the failed payment is recorded; for the order step
//   payment.failed is appended unless the refund was requested or the order was answered already; settled.
// - still running at the provider (409 idempotency_in_progress), unavailable (503) or failing (502): left pending for
//   a later round. A call that never reached the provider charges now: it is handled as above.
// - the order step's charge asks the customer to authenticate (3-D Secure): the attempt waits as `authenticating`
//   and payment.action_required goes out (authentication.ts). The provider's webhook about such a payment settles it
//   by its payment (settleIntent), as the saga's asking again does; a round takes the ones still waiting past their
//   deadline (the order was cancelled meanwhile, or nobody asked): cancelled at the provider, and failed.
// Each reconciliation is logged at info with its orderId (never the token) and counted by outcome.
import { AppError } from '@meridian/contracts'
import { type Sql, type TransactionSql, transaction } from '@meridian/db'
import type { PaymentProvider, ProviderCharge } from '../clients/payment-provider.ts'
import type { ChargeAttempt, ChargeAttemptsRepository } from '../data/charge-attempts-repository.ts'
import type { OrdersRepository } from '../data/orders-repository.ts'
import type { PaymentsRepository } from '../data/payments-repository.ts'
import { awaitAuthentication, continueAuthentication } from './authentication.ts'
import { settleCharge, settleDecline } from './charge-settlement.ts'
import { definitiveChargeFailures } from './payment-data.ts'

export type ReconcileOutcome =
  /** the late charge was refunded (the order's refund had been requested, or it has another charge): payment.refunded */
  | 'refunded'
  /** the charge succeeded and the order was not paid yet: payment.processed appended */
  | 'processed'
  /** the charge was declined or refused: recorded, and for the order step payment.failed appended */
  | 'failed'
  /** the card asks the customer to authenticate: the attempt waits, payment.action_required appended */
  | 'action required'
  /** a payment waiting for the customer's authentication still waits */
  | 'waiting'
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
  /** the orders payment heard of: a charge that pays one marks it paid */
  orders: OrdersRepository
  chargeAttempts: ChargeAttemptsRepository
  provider: PaymentProvider
  /** how long the customer has to authenticate a charge (3-D Secure), ms */
  authenticationTimeoutMs: number
  logger: ReconcilerLogger
  /** an attempt is reconciled once it is at least this old, ms (PAYMENT_RECONCILE_AFTER_MS) */
  afterMs: number
  /** at most this many attempts a round */
  batchSize?: number
  /** counts each reconciliation by outcome (meridian_payment_reconciled_total) */
  counter?: { inc(labels: { outcome: ReconcileOutcome }): void }
}

export { lateRefundKey } from './charge-settlement.ts'

export function createChargeReconciler(deps: ChargeReconcilerDependencies) {
  const { sql, payments, chargeAttempts, provider, logger } = deps
  const batchSize = deps.batchSize ?? 50
  const settlement = { payments, orders: deps.orders, provider }
  const authentication = {
    ...settlement,
    chargeAttempts,
    authenticationTimeoutMs: deps.authenticationTimeoutMs,
  }

  /** The recorded outcome of a replayed successful charge, under the order's lock in `tx`. */
  async function succeeded(
    attempt: ChargeAttempt,
    charge: ProviderCharge,
    tx: TransactionSql,
  ): Promise<Reconciliation> {
    const { outcome, record } = await settleCharge(settlement, attempt, charge, tx)
    return { orderId: attempt.orderId, outcome, paymentId: record.id }
  }

  /** The recorded outcome of a replayed charge that the provider declined or refused. */
  async function declined(
    attempt: ChargeAttempt,
    reason: string,
    tx: TransactionSql,
  ): Promise<Reconciliation> {
    const outcome = await settleDecline(settlement, attempt, reason, tx)
    return { orderId: attempt.orderId, outcome, detail: reason }
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
        const request = {
          amountCents: attempt.amountCents,
          currency: attempt.currency,
          orderId,
          token: attempt.token,
          idempotencyKey: attempt.idempotencyKey,
        }
        // the order step's charge may ask the customer first; a customer's own payment is declined then
        if (attempt.payerId !== null) charge = await provider.charge(request)
        else {
          const answer = await provider.chargeOrAuthenticate(request)
          if (answer.kind === 'authenticate') {
            await awaitAuthentication(authentication, attempt, answer, tx)
            return { orderId, outcome: 'action required' }
          }
          charge = answer.charge
        }
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
      await chargeAttempts.settle(attempt.idempotencyKey, tx, result.paymentId)
      return result
    })
  }

  /**
   * An attempt waiting for authentication, settled under the order's lock when the provider tells its outcome (or
   * cancelled when past its deadline). `wait`: the lock is waited for (a webhook); `skip`: an order another process
   * holds is left for the next round.
   */
  function settleAuthentication(waiting: ChargeAttempt, lock: 'wait' | 'skip'): Promise<Reconciliation> {
    const { orderId } = waiting
    return transaction(sql, async (tx): Promise<Reconciliation> => {
      if (lock === 'wait') await payments.lockOrder(orderId, tx)
      else if (!(await payments.tryLockOrder(orderId, tx)))
        return { orderId, outcome: 'skipped', detail: 'locked' }
      const attempt = await chargeAttempts.lockAuthenticating(waiting.intentId ?? '', tx)
      if (!attempt) return { orderId, outcome: 'skipped', detail: 'settled meanwhile' }
      const outcome = await continueAuthentication(authentication, attempt, tx, { announceWaiting: false })
      return { orderId, outcome }
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
     * The attempt whose provider payment `intentId` waits for the customer's authentication, settled now when the
     * provider tells its outcome (its webhook said so), under the order's lock, as the saga's asking again would:
     * once, whichever comes first. Undefined when no attempt of that payment waits (settled already, or not ours).
     */
    async settleIntent(intentId: string): Promise<Reconciliation | undefined> {
      const waiting = await chargeAttempts.findByIntent(intentId)
      if (waiting?.status !== 'authenticating') return undefined
      const result = await settleAuthentication(waiting, 'wait')
      report(result)
      return result
    },

    /**
     * The pending attempt made under `idempotencyKey`, settled now (the provider's webhook told its outcome), as a
     * round would: under the order's lock, so the webhook and a round settle it once, whichever comes first.
     * Undefined when no attempt under that key is pending (settled already, or not a charge of this service's).
     */
    async reconcileKey(idempotencyKey: string): Promise<Reconciliation | undefined> {
      const due = await chargeAttempts.findByKey(idempotencyKey)
      if (due?.status !== 'pending') return undefined
      const result = await reconcileAttempt(due)
      report(result)
      return result
    },

    /**
     * One round: every pending attempt at least `olderThanMs` old (default `afterMs`), up to the batch size, least
     * recently checked first. Answers each attempt's reconciliation; one attempt's failure does not stop the round.
     */
    async reconcile({
      olderThanMs = deps.afterMs,
    }: {
      olderThanMs?: number
    } = {}): Promise<Reconciliation[]> {
      /** one attempt of the round: its failure is reported as such and does not stop the round */
      const each = async (
        attempt: ChargeAttempt,
        run: (attempt: ChargeAttempt) => Promise<Reconciliation>,
      ) => {
        let result: Reconciliation
        try {
          result = await run(attempt)
        } catch (error) {
          const detail = error instanceof Error ? error.message : String(error)
          result = { orderId: attempt.orderId, outcome: 'error', detail }
        }
        report(result)
        return result
      }
      const results: Reconciliation[] = []
      for (const expired of await chargeAttempts.listExpiredAuthentications(batchSize))
        results.push(await each(expired, (attempt) => settleAuthentication(attempt, 'skip')))
      for (const due of await chargeAttempts.listDue(olderThanMs, batchSize))
        results.push(await each(due, reconcileAttempt))
      return results
    },
  }
}

export type ChargeReconciler = ReturnType<typeof createChargeReconciler>
