// Payment's use cases, built once from the repositories and the provider adapter and handed to the routes and the
// consumers: a customer's payment of an order under an Idempotency-Key and reading a payment (customer-payments.ts),
// and the payment step of the order saga — charging a placed order and refunding it (order-step.ts). Every one of
// them charges or refunds an order under its advisory lock, so they never interleave on one order. The provider is
// reached through the adapter (data/payment-provider.ts) only; no card number is ever stored or logged.
import type { EventData, Payment } from '@meridian/contracts'
import type { Sql, TransactionSql } from '@meridian/db'
import type { ChargeAttemptsRepository } from '../data/charge-attempts-repository.ts'
import type { IdempotencyKeysRepository } from '../data/idempotency-keys-repository.ts'
import type { OrdersRepository } from '../data/orders-repository.ts'
import type { PaymentProvider } from '../data/payment-provider.ts'
import type { PaymentsRepository } from '../data/payments-repository.ts'
import {
  type CreatePaymentCommand,
  createPayment,
  getPayment,
  type PaymentAnswer,
} from './customer-payments.ts'
import { type ChargeOrderOutcome, chargeOrder, type RefundOrderOutcome, refundOrder } from './order-step.ts'
import type { Payer } from './payment-data.ts'

export type { CreatePaymentCommand, PaymentAnswer } from './customer-payments.ts'
export type { ChargeOrderOutcome, RefundOrderOutcome } from './order-step.ts'
export { noPaymentMethod, orderChargeKey, paymentTokenOf } from './order-step.ts'
export {
  chargedOrderData,
  defaultCurrency,
  definitiveChargeFailures,
  orderCancelled,
  type Payer,
  presentPayment,
  processedData,
  serviceSource,
} from './payment-data.ts'

export interface PaymentUseCasesDependencies {
  sql: Sql
  payments: PaymentsRepository
  /** the orders payment heard of: who may pay each, what is due, where its payment stands */
  orders: OrdersRepository
  /** on the pool: an attempt is recorded outside the charge's transaction */
  chargeAttempts: ChargeAttemptsRepository
  idempotencyKeys: IdempotencyKeysRepository
  provider: PaymentProvider
  /** how long a key and its stored answer are kept (IDEMPOTENCY_KEY_TTL_SECONDS) */
  idempotencyKeyTtlSeconds: number
  /** a 'running' key older than this is taken over (its holder died); default 4 provider timeouts, at least 60 s */
  staleRunningAfterSeconds: number
}

export interface PaymentUseCases {
  /** POST /payments (customer-payments.ts) */
  createPayment(command: CreatePaymentCommand): Promise<PaymentAnswer>
  /** GET /payments/{id}: its payer, its order's customer or an admin */
  getPayment(id: string, reader: Payer): Promise<Payment>
  /** order.placed and payment.requested, in the consumer's transaction (order-step.ts) */
  chargeOrder(data: EventData<'order.placed'>, tx: TransactionSql): Promise<ChargeOrderOutcome>
  /** payment.refund_requested, in the consumer's transaction (order-step.ts) */
  refundOrder(order: { orderId: string; reason: string }, tx: TransactionSql): Promise<RefundOrderOutcome>
}

export function createPaymentUseCases(deps: PaymentUseCasesDependencies): PaymentUseCases {
  return {
    createPayment: (command) => createPayment(deps, command),
    getPayment: (id, reader) => getPayment(deps, id, reader),
    chargeOrder: (data, tx) => chargeOrder(deps, data, tx),
    refundOrder: (order, tx) => refundOrder(deps, order, tx),
  }
}
