// A charge of the order step whose card asks the customer to authenticate it first (3-D Secure, "strong customer
// authentication"): the provider's payment waits for the customer's browser on the provider's page. Its charge attempt
// waits as `authenticating` with the payment, the page and a deadline, and payment.action_required tells the order
// saga (the order shows `payment_action_required` with the page as `_links.authenticate`). The outcome is read back
// from the provider — when the saga asks again (payment.requested, at its step timeout) and when the provider's
// webhook says the payment succeeded or failed, whichever comes first, under the order's advisory lock, so it is
// settled once: succeeded -> the charge is recorded and payment.processed goes out (charge-settlement.ts, which also
// refunds it at once when the order was cancelled meanwhile); refused or failed -> payment.failed; still waiting past
// the deadline -> the provider's payment is cancelled (a customer who authenticates in the same moment wins: the
// cancel then finds it succeeded) and payment.failed says the authentication was not completed in time.
import type { TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { ChargeAnswer } from '../clients/payment-provider.ts'
import type { ChargeAttempt, ChargeAttemptsRepository } from '../data/charge-attempts-repository.ts'
import { type ChargeSettlementDependencies, settleCharge, settleDecline } from './charge-settlement.ts'
import { serviceSource } from './payment-data.ts'

export interface AuthenticationDependencies extends ChargeSettlementDependencies {
  chargeAttempts: ChargeAttemptsRepository
  /** how long the customer has to authenticate, ms (PAYMENT_AUTHENTICATION_TIMEOUT_MS) */
  authenticationTimeoutMs: number
}

export type AuthenticationOutcome =
  /** the customer authenticated: the charge is recorded (processed, or refunded at once, or settled already) */
  | 'processed'
  | 'refunded'
  | 'settled'
  /** refused, failed, or not completed in time: payment.failed (unless the order was answered already) */
  | 'failed'
  /** still waiting for the customer */
  | 'waiting'

/** The provider's Idempotency-Key of the cancel of a payment whose authentication was not completed in time. */
export const abandonKey = (attemptKey: string) => `abandon-${attemptKey}`

/** payment.action_required for the order: the page and the deadline. */
async function announceActionRequired(
  orderId: string,
  authenticateUrl: string | null | undefined,
  expiresAt: Date,
  tx: TransactionSql,
): Promise<void> {
  const event = createEvent(
    'payment.action_required',
    { orderId, ...(authenticateUrl ? { authenticateUrl } : {}), expiresAt: expiresAt.toISOString() },
    { source: serviceSource },
  )
  await appendToOutbox(tx, event, { aggregateId: orderId })
}

/**
 * The provider answered the order step's charge with a payment that asks for authentication: the attempt waits as
 * `authenticating` until now + the timeout, and payment.action_required goes out. In the caller's transaction.
 */
export async function awaitAuthentication(
  deps: Pick<AuthenticationDependencies, 'chargeAttempts' | 'authenticationTimeoutMs'>,
  attempt: Pick<ChargeAttempt, 'idempotencyKey' | 'orderId'>,
  answer: Extract<ChargeAnswer, { kind: 'authenticate' }>,
  tx: TransactionSql,
): Promise<void> {
  const expiresAt = new Date(Date.now() + deps.authenticationTimeoutMs)
  await deps.chargeAttempts.markAuthenticating(
    attempt.idempotencyKey,
    { intentId: answer.intentId, authenticateUrl: answer.authenticateUrl, expiresAt },
    tx,
  )
  await announceActionRequired(attempt.orderId, answer.authenticateUrl, expiresAt, tx)
}

/**
 * Where the attempt's payment stands now, settled when the provider tells an outcome; one still waiting past its
 * deadline is cancelled first. Under the order's advisory lock, in `tx`. `announceWaiting`: append
 * payment.action_required again when it still waits (the saga asked again and waits for an answer).
 */
export async function continueAuthentication(
  deps: AuthenticationDependencies,
  attempt: ChargeAttempt,
  tx: TransactionSql,
  { announceWaiting }: { announceWaiting: boolean },
): Promise<AuthenticationOutcome> {
  const { provider, chargeAttempts } = deps
  const intentId = attempt.intentId
  const expiresAt = attempt.authenticationExpiresAt
  if (intentId === null || expiresAt === null)
    throw new Error(`charge attempt ${attempt.idempotencyKey} is not waiting for authentication`)
  let standing = await provider.authentication(intentId)
  if (standing.status === 'waiting' && expiresAt.getTime() <= Date.now())
    standing = await provider.abandonAuthentication(intentId, abandonKey(attempt.idempotencyKey))
  switch (standing.status) {
    case 'waiting':
      if (announceWaiting)
        await announceActionRequired(
          attempt.orderId,
          standing.authenticateUrl ?? attempt.authenticateUrl,
          expiresAt,
          tx,
        )
      return 'waiting'
    case 'succeeded': {
      const { outcome, record } = await settleCharge(deps, attempt, standing.charge, tx)
      await chargeAttempts.settle(attempt.idempotencyKey, tx, record.id)
      return outcome
    }
    case 'failed': {
      const outcome = await settleDecline(deps, attempt, standing.reason, tx)
      await chargeAttempts.settle(attempt.idempotencyKey, tx)
      return outcome
    }
  }
}
