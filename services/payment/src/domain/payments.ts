// Payment use cases: POST /payments under an Idempotency-Key, reading a payment, and the payment step of the order
// saga (charging a placed order, again when the saga requests it, and refunding it when the saga compensates; an
// order's charge and refund take its advisory lock, so they never interleave). A charge of the order step is
// recorded as a charge attempt before the provider is called, outside the consumer's transaction, so that a charge
// whose outcome is unknown (the provider timed out) is found and settled later by the charge reconciler
// (reconciler.ts). The provider is reached through the adapter (data/payment-provider.ts) only; no card number is
// ever stored or logged.
import {
  AppError,
  type CreatePaymentBody,
  type EventData,
  fromMinorUnits,
  type Payment,
  requireMinorUnits,
  toMinorUnits,
} from '@meridian/contracts'
import { type Sql, type TransactionSql, transaction } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { ChargeAttemptsRepository, ChargedOrderData } from '../data/charge-attempts-repository.ts'
import type { IdempotencyKeysRepository } from '../data/idempotency-keys-repository.ts'
import type { PaymentProvider } from '../data/payment-provider.ts'
import type { PaymentRecord, PaymentsRepository } from '../data/payments-repository.ts'
import {
  idempotencyInProgress,
  idempotencyMismatch,
  isStoredOutcome,
  providerChargeKey,
  replayedError,
  requestFingerprint,
  requireIdempotencyKey,
  storedErrorOf,
} from './idempotency.ts'

/** The name payment signs its events with (the envelope's source). */
export const serviceSource = 'payment'

/** The only currency the provider charges in for now. */
export const defaultCurrency = 'usd'

/** Reason of payment.failed when order.placed carries no payment method. */
export const noPaymentMethod = 'no payment method'

export interface Payer {
  /** the principal's subject: scopes the caller's Idempotency-Keys, and owns the payment */
  subject: string
  isAdmin: boolean
}

export interface CreatePaymentCommand {
  payer: Payer
  idempotencyKey: string | string[] | undefined
  body: CreatePaymentBody
  requestId?: string
}

export interface PaymentAnswer {
  /** a payment answer is always a 201 (errors are thrown, replayed ones too) */
  status: 201
  payment: Payment
  /** true when the answer is the stored one of an earlier request with the same key */
  replayed: boolean
}

export function presentPayment(record: PaymentRecord): Payment {
  return {
    paymentId: record.id,
    orderId: record.orderId,
    status: record.status,
    amount: fromMinorUnits(record.amountCents),
    brand: record.brand,
    last4: record.last4,
  }
}

/** An order.placed event's payment token (its `payment.token`), if any. */
export function paymentTokenOf(data: EventData<'order.placed'>): string | undefined {
  return data.payment?.token
}

/** Reason of payment.failed when the order's refund was requested before it was charged. */
export const orderCancelled = 'the order was cancelled'

/** The provider's Idempotency-Key of the order step's charge: every charge of the order step sends it. */
export const orderChargeKey = (orderId: string) => `order-${orderId}`

/** Provider answers of a charge that are its definitive failure: declined, a refused payment method, rate-limited. */
export const definitiveChargeFailures: readonly number[] = [402, 422, 429]

/** The order.placed content that payment.processed carries (no payment token, no saga attempt). */
export function chargedOrderData(data: EventData<'order.placed'>): ChargedOrderData {
  const { orderId, customerId, total, items, customerEmail, status, shippingAddress } = data
  return {
    orderId,
    customerId,
    total,
    items,
    ...(customerEmail === undefined ? {} : { customerEmail }),
    ...(status === undefined ? {} : { status }),
    ...(shippingAddress === undefined ? {} : { shippingAddress }),
  }
}

/** payment.processed data: the order's content plus the payment that charged it. */
export const processedData = (
  order: ChargedOrderData,
  paymentId: string,
): EventData<'payment.processed'> => ({
  ...order,
  paymentId,
})

export type ChargeOrderOutcome =
  | { outcome: 'processed'; paymentId: string }
  /** payment.failed was appended: declined, no payment method, or the order's refund was requested */
  | { outcome: 'failed'; reason: string }
  /** the order was charged already: nothing charged, payment.processed appended again with the same paymentId */
  | { outcome: 'already processed'; paymentId: string }
  /** the order's charge was declined already: nothing charged, payment.failed appended again with its reason */
  | { outcome: 'already failed'; reason: string }

export type RefundOrderOutcome =
  | { outcome: 'refunded'; paymentIds: string[] }
  /** no succeeded payment (never charged, or refunded already): payment.refunded with amount 0, no paymentId */
  | { outcome: 'nothing to refund' }

export interface PaymentUseCasesDependencies {
  sql: Sql
  payments: PaymentsRepository
  /** on the pool: an attempt is recorded outside the consumer's transaction */
  chargeAttempts: ChargeAttemptsRepository
  idempotencyKeys: IdempotencyKeysRepository
  provider: PaymentProvider
  /** how long a key and its stored answer are kept (IDEMPOTENCY_KEY_TTL_SECONDS) */
  idempotencyKeyTtlSeconds: number
  /** a 'running' key older than this is taken over (its holder died); default 4 provider timeouts, at least 60 s */
  staleRunningAfterSeconds: number
}

export function createPaymentUseCases(deps: PaymentUseCasesDependencies) {
  const { sql, payments, chargeAttempts, idempotencyKeys, provider } = deps

  /** Tokenizes a card (never kept) or takes the token; brand and last four when the provider told them. */
  async function sourceToken(
    source: CreatePaymentBody['source'],
    requestId: string | undefined,
  ): Promise<{ token: string; brand?: string; last4?: string }> {
    if ('token' in source) return { token: source.token }
    return provider.tokenize(source.card, requestId)
  }

  /** Runs a payment request that holds its key; stores a 2xx or 4xx outcome with the payment, in one transaction. */
  async function runPayment(
    scope: string,
    key: string,
    command: CreatePaymentCommand,
    amountCents: number,
  ): Promise<PaymentAnswer> {
    const { body, payer, requestId } = command
    const currency = body.currency ?? defaultCurrency
    let card: { brand?: string; last4?: string } = {}
    try {
      const source = await sourceToken(body.source, requestId)
      card = {
        ...(source.brand ? { brand: source.brand } : {}),
        ...(source.last4 ? { last4: source.last4 } : {}),
      }
      const charge = await provider.charge({
        amountCents,
        currency,
        orderId: body.orderId,
        token: source.token,
        idempotencyKey: providerChargeKey(scope, key),
        ...(requestId ? { requestId } : {}),
      })
      return await transaction(sql, async (tx) => {
        const record = await payments.recordCharge(
          {
            orderId: body.orderId,
            payerId: payer.subject,
            amountCents,
            currency,
            status: 'succeeded',
            providerChargeId: charge.id,
            brand: charge.brand,
            last4: charge.last4,
          },
          tx,
        )
        const payment = presentPayment(record)
        await idempotencyKeys.complete(scope, key, { status: 201, body: payment }, tx)
        return { status: 201, payment, replayed: false }
      })
    } catch (error) {
      if (error instanceof AppError && isStoredOutcome(error.statusCode)) {
        await transaction(sql, async (tx) => {
          if (error.statusCode === 402) {
            await payments.insert(
              {
                orderId: body.orderId,
                payerId: payer.subject,
                amountCents,
                currency,
                status: 'failed',
                failureReason: error.message,
                ...card,
              },
              tx,
            )
          }
          await idempotencyKeys.complete(
            scope,
            key,
            { status: error.statusCode, body: storedErrorOf(error) },
            tx,
          )
        })
        throw error
      }
      // a 5xx (or a failure of ours) is not stored: the key is free again and a retry runs anew
      await idempotencyKeys.release(scope, key).catch(() => undefined)
      throw error
    }
  }

  return {
    /**
     * POST /payments. The key (required: 400 without it) is the caller's: the first request with it runs and its
     * 2xx or 4xx outcome is stored for the TTL; the same key and body again answer the stored outcome (replayed);
     * the same key with another body is 422; while the first still runs, 409. A 5xx outcome is not stored.
     */
    async createPayment(command: CreatePaymentCommand): Promise<PaymentAnswer> {
      const key = requireIdempotencyKey(command.idempotencyKey)
      // a body that fails validation never ran: nothing is stored for it
      const amountCents = requireMinorUnits(command.body.amount, 'amount')
      const scope = command.payer.subject
      const requestHash = requestFingerprint(scope, key, command.body)
      const claim = await idempotencyKeys.claim({
        scope,
        key,
        requestHash,
        ttlSeconds: deps.idempotencyKeyTtlSeconds,
        staleAfterSeconds: deps.staleRunningAfterSeconds,
      })
      if (!claim.claimed) {
        const { existing } = claim
        if (existing.requestHash !== requestHash) throw idempotencyMismatch()
        if (existing.status === 'running') throw idempotencyInProgress()
        const status = existing.responseStatus ?? 500
        if (status !== 201) throw replayedError(status, existing.responseBody)
        return { status, payment: existing.responseBody as Payment, replayed: true }
      }
      return runPayment(scope, key, command, amountCents)
    },

    /** A payment, for its payer or an admin (403 for anyone else); 404 when there is none. */
    async getPayment(id: string, reader: Payer): Promise<Payment> {
      const record = await payments.findById(id)
      if (!record) throw AppError.notFound('Payment not found')
      if (!reader.isAdmin && record.payerId !== reader.subject) throw AppError.forbidden()
      return presentPayment(record)
    },

    /**
     * The payment step of the order saga, in the consumer's transaction: order.placed, and payment.requested (the
     * saga asking again after a timeout). Every call answers with an event. Under the order's advisory lock (a refund
     * of the order waits for it, and it for a refund):
     * - the order's refund was requested already (payment.refund_requested came first): no charge, payment.failed
     *   'the order was cancelled';
     * - the order step charged the order already: payment.processed again with the same paymentId, or, when that
     *   charge was declined, payment.failed again with the stored reason (the provider is not called again);
     * - else the order's total is charged with its payment token under the provider key `order-<orderId>` (a retry
     *   after a timeout never charges twice), the payment recorded and payment.processed appended (the order.placed
     *   data plus paymentId). A decline (402), a refused method (422) or the provider's rate limit (429, which it
     *   replays for that key) records a failed payment and appends payment.failed; no token appends payment.failed
     *   'no payment method'. An unavailable or failing provider (503 / 502) throws, so the event is retried and
     *   finally dead-lettered.
     * Right before the provider is called, the charge attempt (key, amount, currency, token, order content) is
     * recorded pending through the pool, outside `tx`: it outlives the rollback of a call that throws (its outcome
     * unknown: the provider may charge later). A definitive outcome (succeeded, declined, refused) settles it in `tx`;
     * one left pending is the charge reconciler's (reconciler.ts).
     */
    async chargeOrder(data: EventData<'order.placed'>, tx: TransactionSql): Promise<ChargeOrderOutcome> {
      const fail = async (reason: string, outcome: 'failed' | 'already failed' = 'failed') => {
        const failed = createEvent(
          'payment.failed',
          { orderId: data.orderId, reason },
          { source: serviceSource },
        )
        await appendToOutbox(tx, failed, { aggregateId: data.orderId })
        return { outcome, reason } satisfies ChargeOrderOutcome
      }
      const succeed = async (paymentId: string, outcome: 'processed' | 'already processed' = 'processed') => {
        const processed = createEvent('payment.processed', processedData(chargedOrderData(data), paymentId), {
          source: serviceSource,
        })
        await appendToOutbox(tx, processed, { aggregateId: data.orderId })
        return { outcome, paymentId } satisfies ChargeOrderOutcome
      }

      await payments.lockOrder(data.orderId, tx)
      if (await payments.refundRequested(data.orderId, tx)) return fail(orderCancelled)
      const earlier = await payments.findLatestOfOrderStep(data.orderId, tx)
      if (earlier?.status === 'succeeded') return succeed(earlier.id, 'already processed')
      if (earlier?.status === 'refunded') return fail(orderCancelled)
      if (earlier?.status === 'failed')
        return fail(earlier.failureReason ?? 'payment failed', 'already failed')

      const amountCents = toMinorUnits(data.total)
      if (amountCents === undefined || amountCents === 0) return fail('invalid order total')
      const token = paymentTokenOf(data)
      if (!token) return fail(noPaymentMethod)

      const idempotencyKey = orderChargeKey(data.orderId)
      // on the pool, not in tx: the attempt stays when tx rolls back (a timeout leaves its outcome unknown)
      await chargeAttempts.record({
        idempotencyKey,
        orderId: data.orderId,
        amountCents,
        currency: defaultCurrency,
        token,
        orderData: chargedOrderData(data),
      })
      let charge: Awaited<ReturnType<PaymentProvider['charge']>>
      try {
        charge = await provider.charge({
          amountCents,
          currency: defaultCurrency,
          orderId: data.orderId,
          token,
          idempotencyKey,
        })
      } catch (error) {
        // declined, rate-limited, or a payment method the provider refuses: the order's payment failed
        if (error instanceof AppError && definitiveChargeFailures.includes(error.statusCode)) {
          await payments.insert(
            {
              orderId: data.orderId,
              amountCents,
              currency: defaultCurrency,
              status: 'failed',
              failureReason: error.message,
            },
            tx,
          )
          await chargeAttempts.settle(idempotencyKey, tx)
          return fail(error.message)
        }
        throw error
      }
      await chargeAttempts.settle(idempotencyKey, tx)

      const record = await payments.insert(
        {
          orderId: data.orderId,
          amountCents,
          currency: defaultCurrency,
          status: 'succeeded',
          providerChargeId: charge.id,
          brand: charge.brand,
          last4: charge.last4,
        },
        tx,
      )
      if (!record) {
        // the provider replayed a charge recorded already (the lookup above missed it): answer with it
        const recorded = await payments.findByChargeId(charge.id, tx)
        if (!recorded) throw new Error(`charge ${charge.id} is neither new nor recorded`)
        if (recorded.status === 'refunded') return fail(orderCancelled)
        return succeed(recorded.id, 'already processed')
      }
      return succeed(record.id)
    },

    /**
     * The saga's compensation (payment.refund_requested), in the consumer's transaction, under the order's advisory
     * lock (a charge in flight is waited for, then refunded): the request is recorded (a later charge of the order
     * is not made), each succeeded payment of the order is refunded in full at the provider (key
     * `refund-<orderId>` for the order's first refund, `refund-<orderId>-<paymentId>` for any further payment),
     * marked refunded, and payment.refunded is appended for it. It always answers: with no succeeded payment left
     * (never charged, or refunded already) one payment.refunded without paymentId and with amount 0 is appended.
     */
    async refundOrder(
      order: { orderId: string; reason: string },
      tx: TransactionSql,
    ): Promise<RefundOrderOutcome> {
      await payments.lockOrder(order.orderId, tx)
      await payments.recordRefundRequest(order.orderId, order.reason, tx)
      const paid = (await payments.lockSucceededOfOrder(order.orderId, tx)).filter(
        (payment) => payment.providerChargeId !== null,
      )
      if (paid.length === 0) {
        const nothing = createEvent(
          'payment.refunded',
          { orderId: order.orderId, amount: 0, reason: order.reason },
          { source: serviceSource },
        )
        await appendToOutbox(tx, nothing, { aggregateId: order.orderId })
        return { outcome: 'nothing to refund' }
      }
      // the order's first refund takes the key `refund-<orderId>`; a payment made after it (POST /payments) its own
      let firstKeyTaken = await payments.hasRefunded(order.orderId, tx)
      for (const payment of paid) {
        const refund = await provider.refund({
          chargeId: payment.providerChargeId ?? '',
          idempotencyKey: firstKeyTaken ? `refund-${order.orderId}-${payment.id}` : `refund-${order.orderId}`,
        })
        firstKeyTaken = true
        await payments.markRefunded(payment.id, payment.refundedCents + refund.amount, tx)
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
    },
  }
}

export type PaymentUseCases = ReturnType<typeof createPaymentUseCases>
