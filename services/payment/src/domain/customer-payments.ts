// POST /payments: a caller pays an order under an Idempotency-Key, and GET /payments/{id}. A payment pays an order
// payment knows (orders it heard of from order.placed), the caller's own (or any, for an admin), that awaits a
// payment (its payment failed), with the amount due — checked before the card goes to the provider, and again under
// the order's advisory lock, which the saga's charge and refund of the order take too, so the two never both charge
// it. The charge is recorded as an attempt before the provider is called (its outcome may be left unknown: the
// reconciler settles it), and its success moves the order on with payment.processed, in the transaction that
// stores the key's answer. No card number is ever stored or logged.
import { AppError, type CreatePaymentBody, type Payment, requireMinorUnits } from '@meridian/contracts'
import { type Queryable, type Sql, type TransactionSql, transaction } from '@meridian/db'
import type { RequestFingerprints } from '@meridian/service-kit'
import { isProviderFailure, type PaymentProvider, type ProviderCharge } from '../clients/payment-provider.ts'
import type { ChargeAttempt, ChargeAttemptsRepository } from '../data/charge-attempts-repository.ts'
import type { IdempotencyKeysRepository } from '../data/idempotency-keys-repository.ts'
import type { OrdersRepository, OrderToPay } from '../data/orders-repository.ts'
import type { PaymentsRepository } from '../data/payments-repository.ts'
import { type DeclinedCard, settleCharge, settleDecline } from './charge-settlement.ts'
import {
  idempotencyInProgress,
  idempotencyMismatch,
  isStoredOutcome,
  newProviderChargeKey,
  replayedError,
  requireIdempotencyKey,
  storedErrorOf,
} from './idempotency.ts'
import { payability } from './payable-order.ts'
import { defaultCurrency, definitiveChargeFailures, type Payer, presentPayment } from './payment-data.ts'

export interface CreatePaymentCommand {
  payer: Payer
  idempotencyKey: string | string[] | undefined
  body: CreatePaymentBody
}

export interface PaymentAnswer {
  /** a payment answer is always a 201 (errors are thrown, replayed ones too) */
  status: 201
  payment: Payment
  /** true when the answer is the stored one of an earlier request with the same key */
  replayed: boolean
}

export interface CustomerPaymentsDependencies {
  sql: Sql
  payments: PaymentsRepository
  orders: OrdersRepository
  chargeAttempts: ChargeAttemptsRepository
  idempotencyKeys: IdempotencyKeysRepository
  provider: PaymentProvider
  /**
   * A pool of its own for the writes that must outlive the charge's transaction (its attempt recorded, or settled when
   * the provider failed it): that transaction holds the order's lock while other payments of the order wait for it
   * holding connections of the main pool (order-step.ts' OrderStepDependencies.autonomous).
   */
  autonomous: Sql
  /** how long a key and its stored answer are kept (IDEMPOTENCY_KEY_TTL_SECONDS) */
  idempotencyKeyTtlSeconds: number
  /** how a request is fingerprinted under IDEMPOTENCY_SECRET (idempotency.ts' paymentFingerprints) */
  fingerprints: RequestFingerprints
  /** a 'running' key older than this is taken over (its holder died); default 4 provider timeouts, at least 60 s */
  staleRunningAfterSeconds: number
}

/** One request holding its key. */
interface PaymentRequest {
  scope: string
  key: string
  /** the provider's Idempotency-Key of this request: new per request, kept when the same request runs again */
  providerKey: string
  command: CreatePaymentCommand
  amountCents: number
  currency: string
}

type PayOutcome =
  /** charged (or its earlier charge replayed): the 201 answer is stored with the key */
  | { kind: 'paid'; payment: Payment }
  /** the order cannot be paid by this request: nothing was charged and nothing is stored (the key is free again) */
  | { kind: 'refused'; error: AppError }
  /** the provider declined, refused the card or rate-limited: the answer is stored with the key */
  | { kind: 'declined'; error: AppError }

/**
 * The order the request may pay, or the refusal. A charge of this very request whose outcome is unknown (the same key
 * and body, sent before without an answer: its attempt is pending) needs no check: the provider answers it again
 * under its key and charges nothing more.
 */
async function checkPayable(
  deps: CustomerPaymentsDependencies,
  request: PaymentRequest,
  replaying: boolean,
  db: Queryable,
): Promise<{ payable: true; order: OrderToPay } | { payable: false; refusal: AppError }> {
  const { orderId } = request.command.body
  const order = await deps.orders.find(orderId, db)
  if (replaying && order) return { payable: true, order }
  const [refundRequested, otherChargePending] = await Promise.all([
    deps.payments.refundRequested(orderId, db),
    deps.chargeAttempts.hasPendingOfOrder(orderId, request.providerKey, db),
  ])
  return payability({
    orderId,
    payer: request.command.payer,
    amountCents: request.amountCents,
    currency: request.currency,
    order,
    refundRequested,
    otherChargePending,
  })
}

/** Tokenizes a card (never kept) or takes the token; brand and last four when the provider told them. */
async function sourceToken(
  provider: PaymentProvider,
  source: CreatePaymentBody['source'],
): Promise<{ token: string } & DeclinedCard> {
  if ('token' in source) return { token: source.token }
  return provider.tokenize(source.card)
}

/** The 201 of a request whose charge was recorded as `paymentId` (settled while its answer was lost). */
async function answerRecorded(
  deps: CustomerPaymentsDependencies,
  request: PaymentRequest,
  paymentId: string,
  db: Queryable,
): Promise<PayOutcome | undefined> {
  const record = await deps.payments.findById(paymentId, db)
  if (!record) return undefined
  const payment = presentPayment(record)
  await deps.idempotencyKeys.complete(request.scope, request.key, { status: 201, body: payment }, db)
  return { kind: 'paid', payment }
}

/** The provider's answer to the charge, or the definitive failure (declined, refused, rate-limited) it gave. */
async function chargeAtProvider(
  deps: CustomerPaymentsDependencies,
  attempt: ChargeAttempt,
): Promise<{ charge: ProviderCharge } | { failure: AppError }> {
  try {
    const charge = await deps.provider.charge({
      amountCents: attempt.amountCents,
      currency: attempt.currency,
      orderId: attempt.orderId,
      token: attempt.token,
      idempotencyKey: attempt.idempotencyKey,
    })
    return { charge }
  } catch (error) {
    if (isProviderFailure(error)) {
      // the provider answered with a failure of its own: it charged nothing, so the attempt holds the order up no
      // longer (through the autonomous pool: the transaction rolls back); the same request again runs under the same key
      await deps.chargeAttempts.settle(attempt.idempotencyKey, deps.autonomous)
    }
    if (error instanceof AppError && definitiveChargeFailures.includes(error.statusCode))
      return { failure: error }
    throw error
  }
}

/**
 * The charge, under the order's advisory lock in `tx`: checked again (the saga's charge, a refund or another payment
 * may have come in between), the attempt recorded through the autonomous pool (it outlives a rollback: a timeout leaves it for
 * the reconciler), the provider called under the request's key, and the outcome settled and stored with the key.
 */
async function chargeUnderLock(
  deps: CustomerPaymentsDependencies,
  request: PaymentRequest,
  source: { token: string } & DeclinedCard,
  tx: TransactionSql,
): Promise<PayOutcome> {
  const { scope, key, providerKey, command } = request
  const { orderId } = command.body
  await deps.payments.lockOrder(orderId, tx)
  // read again under the lock: the reconciler may have settled this request's charge meanwhile
  const earlier = await deps.chargeAttempts.findByKey(providerKey, tx)
  if (earlier?.paymentId) {
    const answered = await answerRecorded(deps, request, earlier.paymentId, tx)
    if (answered) return answered
  }
  const replaying = earlier?.status === 'pending'
  const checked = await checkPayable(deps, request, replaying, tx)
  if (!checked.payable) return { kind: 'refused', error: checked.refusal }

  const attempt: ChargeAttempt = {
    idempotencyKey: providerKey,
    orderId,
    payerId: command.payer.subject,
    amountCents: request.amountCents,
    currency: request.currency,
    token: source.token,
    orderData: checked.order.orderData,
    status: 'pending',
    paymentId: null,
    createdAt: new Date(),
    checkedAt: null,
    intentId: null,
    authenticateUrl: null,
    authenticationExpiresAt: null,
    // a replay sends exactly what was sent the first time
    ...(earlier
      ? { token: earlier.token, amountCents: earlier.amountCents, currency: earlier.currency }
      : {}),
  }
  // pending again when the same request runs again after the provider failed it (its first parameters stay)
  await deps.chargeAttempts.record(attempt, deps.autonomous)
  const answer = await chargeAtProvider(deps, attempt)
  if ('failure' in answer) {
    const { failure } = answer
    const card = {
      ...(source.brand ? { brand: source.brand } : {}),
      ...(source.last4 ? { last4: source.last4 } : {}),
    }
    await settleDecline(deps, attempt, failure.message, tx, card)
    await deps.chargeAttempts.settle(providerKey, tx)
    await deps.idempotencyKeys.complete(
      scope,
      key,
      { status: failure.statusCode, body: storedErrorOf(failure) },
      tx,
    )
    return { kind: 'declined', error: failure }
  }
  const { record } = await settleCharge(deps, attempt, answer.charge, tx)
  await deps.chargeAttempts.settle(providerKey, tx, record.id)
  const payment = presentPayment(record)
  await deps.idempotencyKeys.complete(scope, key, { status: 201, body: payment }, tx)
  return { kind: 'paid', payment }
}

/** Runs a request that holds its key: checks, tokenizes, then charges under the order's lock. */
async function payOrder(deps: CustomerPaymentsDependencies, request: PaymentRequest): Promise<PayOutcome> {
  const earlier = await deps.chargeAttempts.findByKey(request.providerKey)
  // first without the lock: a request that cannot pay the order is refused before the card goes anywhere
  const checked = await checkPayable(deps, request, earlier?.status === 'pending', deps.sql)
  if (!checked.payable && !earlier?.paymentId) return { kind: 'refused', error: checked.refusal }
  const { command } = request
  if (earlier)
    return transaction(deps.sql, (tx) => chargeUnderLock(deps, request, { token: earlier.token }, tx))
  let source: { token: string } & DeclinedCard
  try {
    source = await sourceToken(deps.provider, command.body.source)
  } catch (error) {
    if (!(error instanceof AppError && isStoredOutcome(error.statusCode))) throw error
    // the provider refused the card (or rate-limited the call): the request ran, its answer is kept
    const { scope, key } = request
    await deps.idempotencyKeys.complete(scope, key, { status: error.statusCode, body: storedErrorOf(error) })
    return { kind: 'declined', error }
  }
  return transaction(deps.sql, (tx) => chargeUnderLock(deps, request, source, tx))
}

/**
 * POST /payments. The key (required: 400 without it) is the caller's: the first request with it runs and its 2xx or
 * 4xx outcome is stored for the TTL; the same key and body again answer the stored outcome (replayed); the same key
 * with another body is 422; while the first still runs, 409. An order that cannot be paid (404 unknown or another's,
 * 409 not awaiting a payment, 422 another amount) is refused before anything is charged, and not stored: the key may
 * be used again. A 5xx is not stored either; the same body again keeps the provider key it was sent with.
 */
export async function createPayment(
  deps: CustomerPaymentsDependencies,
  command: CreatePaymentCommand,
): Promise<PaymentAnswer> {
  const key = requireIdempotencyKey(command.idempotencyKey)
  // a body that fails validation never ran: nothing is stored for it
  const amountCents = requireMinorUnits(command.body.amount, 'amount')
  const scope = command.payer.subject
  const requestHash = deps.fingerprints.of(scope, key, command.body)
  const claim = await deps.idempotencyKeys.claim({
    scope,
    key,
    requestHash,
    providerKey: newProviderChargeKey(),
    ttlSeconds: deps.idempotencyKeyTtlSeconds,
    staleAfterSeconds: deps.staleRunningAfterSeconds,
  })
  if (!claim.claimed) {
    const { existing } = claim
    if (!deps.fingerprints.matches(existing.requestHash, scope, key, command.body))
      throw idempotencyMismatch()
    if (existing.status === 'running') throw idempotencyInProgress()
    const status = existing.responseStatus ?? 500
    if (status !== 201) throw replayedError(status, existing.responseBody)
    return { status, payment: existing.responseBody as Payment, replayed: true }
  }

  const request: PaymentRequest = {
    scope,
    key,
    providerKey: claim.providerKey,
    command,
    amountCents,
    currency: command.body.currency ?? defaultCurrency,
  }
  let outcome: PayOutcome
  try {
    outcome = await payOrder(deps, request)
  } catch (error) {
    // a 5xx (or a failure of ours) is not stored: the key is free again, and the same body keeps its provider key
    // (a charge made without a known outcome is answered again by the provider, never made twice)
    await deps.idempotencyKeys.release(scope, key).catch(() => undefined)
    throw error
  }
  if (outcome.kind === 'refused') {
    await deps.idempotencyKeys.release(scope, key)
    throw outcome.error
  }
  if (outcome.kind === 'declined') throw outcome.error
  return { status: 201, payment: outcome.payment, replayed: false }
}

/** A payment, for its payer, the customer of its order, or an admin (403 for anyone else); 404 when there is none. */
export async function getPayment(
  deps: Pick<CustomerPaymentsDependencies, 'payments' | 'orders'>,
  id: string,
  reader: Payer,
): Promise<Payment> {
  const record = await deps.payments.findById(id)
  if (!record) throw AppError.notFound('Payment not found')
  if (reader.isAdmin || record.payerId === reader.subject) return presentPayment(record)
  const order = reader.isUser ? await deps.orders.find(record.orderId) : undefined
  if (order?.customerId !== reader.subject) throw AppError.forbidden()
  return presentPayment(record)
}
