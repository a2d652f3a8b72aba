// Payment's use cases, built once from the repositories and the provider adapter and handed to the routes and the
// consumers: a customer's payment of an order under an Idempotency-Key and reading a payment (customer-payments.ts),
// the payment step of the order saga — charging a placed order and refunding it (order-step.ts) — and a refund of
// an amount under its asker's key, as a return's of its returned lines (amount-refund.ts). Every one of them charges or refunds an order under its advisory
// lock, so they never interleave on one order. The provider is
// reached through the adapter (clients/payment-provider.ts) only; no card number is ever stored or logged.
import type { EventData, Payment } from '@meridian/contracts'
import type { TransactionSql } from '@meridian/db'
import {
  type AmountRefundDependencies,
  type AmountRefundRequest,
  type RefundAmountOutcome,
  refundAmount,
} from './amount-refund.ts'
import {
  type CreatePaymentCommand,
  type CustomerPaymentsDependencies,
  createPayment,
  getPayment,
  type PaymentAnswer,
} from './customer-payments.ts'
import {
  type ChargeOrderOutcome,
  chargeOrder,
  type OrderStepDependencies,
  type RefundOrderOutcome,
  refundOrder,
} from './order-step.ts'
import type { Payer } from './payment-data.ts'

export type { AmountRefundRequest, RefundAmountOutcome } from './amount-refund.ts'
export { providerRefundKey } from './amount-refund.ts'
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

/** What the use cases need: the customers' payments' dependencies, which include the saga's step's, and keyed refunds'. */
export type PaymentUseCasesDependencies = CustomerPaymentsDependencies &
  OrderStepDependencies &
  AmountRefundDependencies

export interface PaymentUseCases {
  /** POST /payments (customer-payments.ts) */
  createPayment(command: CreatePaymentCommand): Promise<PaymentAnswer>
  /** GET /payments/{id}: its payer, its order's customer or an admin */
  getPayment(id: string, reader: Payer): Promise<Payment>
  /** order.placed and payment.requested, in the consumer's transaction (order-step.ts) */
  chargeOrder(data: EventData<'order.placed'>, tx: TransactionSql): Promise<ChargeOrderOutcome>
  /** payment.refund_requested, in the consumer's transaction (order-step.ts) */
  refundOrder(order: { orderId: string; reason: string }, tx: TransactionSql): Promise<RefundOrderOutcome>
  /** payment.refund_requested of an amount under a key, in the consumer's transaction (amount-refund.ts) */
  refundAmount(request: AmountRefundRequest, tx: TransactionSql): Promise<RefundAmountOutcome>
}

export function createPaymentUseCases(deps: PaymentUseCasesDependencies): PaymentUseCases {
  return {
    createPayment: (command) => createPayment(deps, command),
    getPayment: (id, reader) => getPayment(deps, id, reader),
    chargeOrder: (data, tx) => chargeOrder(deps, data, tx),
    refundOrder: (order, tx) => refundOrder(deps, order, tx),
    refundAmount: (request, tx) => refundAmount(deps, request, tx),
  }
}
