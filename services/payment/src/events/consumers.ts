// Payment's consumers: one typed handler per consumed event type, each a call of a payment use case in the
// consumer's transaction (the one that records the event in the inbox), so effect and record commit together. The
// provider is called inside that transaction: the inbox makes a redelivery a no-op, and the provider's idempotency
// key (`order-<orderId>`, `refund-<orderId>`) makes a retry after a timeout charge or refund once. A charge whose
// call timed out rolls back but leaves its charge attempt (recorded outside the transaction): the charge reconciler
// (domain/reconciler.ts, on its clock in app.ts) settles it even when no retry ever calls again
// (the saga compensated first).
// The forward step is choreographed (order.placed charges); the order service's processes send the commands:
// payment.requested (the saga charges again after a timeout), payment.refund_requested (the saga's compensation, or
// an amount under the asking process's key, as a return's refund of its returned lines). Each command is always
// answered (payment.processed / payment.failed, payment.refunded, or payment.refund_failed.v2 when a keyed refund
// cannot be made). Which process asked is not payment's business: the answers go back by the stamp the command
// carried (the process header). order.cancelled and order.failed are not consumed: the compensation comes as
// payment.refund_requested.

import { refundAsked } from '@meridian/contracts'
import {
  type AnyServiceConsumer,
  type ConsumersOptions,
  consumersOf,
  type EventHandler,
  InvalidEventError,
} from '@meridian/events'
import { amountRefundRequest } from '../domain/amount-refund.ts'
import type { PaymentUseCases } from '../domain/payments.ts'

/** The consumer group of the payment service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'payment'

/** order.placed: the order is charged; payment.processed or payment.failed follows. */
export const onOrderPlaced =
  (payments: PaymentUseCases): EventHandler<'order.placed'> =>
  async (event, tx) => {
    await payments.chargeOrder(event.data, tx)
  }

/**
 * payment.requested: the saga asks again (its payment step timed out); charged as on order.placed, once at the
 * provider, and answered with payment.processed (the same paymentId when charged already) or payment.failed.
 */
export const onPaymentRequested =
  (payments: PaymentUseCases): EventHandler<'payment.requested'> =>
  async (event, tx) => {
    const { attempt: _attempt, ...order } = event.data
    await payments.chargeOrder(order, tx)
  }

/**
 * payment.refund_requested: a compensation refunds the order's payments (payment.refunded for each); an amount under
 * a key is refunded once (payment.refunded with the key, or payment.refund_failed.v2). A keyed refund whose command
 * names no key cannot be answered at all: a bad event (dead-lettered).
 */
export const onRefundRequested =
  (payments: PaymentUseCases): EventHandler<'payment.refund_requested'> =>
  async (event, tx) => {
    const asked = refundAsked(event.data)
    if (asked.kind === 'order') {
      await payments.refundOrder({ orderId: asked.orderId, reason: asked.reason }, tx)
      return
    }
    const { refundKey } = asked
    if (refundKey === undefined)
      throw new InvalidEventError(
        `payment.refund_requested of order ${asked.orderId}: a refund of an amount names its refundKey`,
      )
    await payments.refundAmount(amountRefundRequest(event.data, refundKey), tx)
  }

export type PaymentEventType = 'order.placed' | 'payment.requested' | 'payment.refund_requested'

export type PaymentConsumersOptions = ConsumersOptions<PaymentEventType>

/** What the app's event backbone runs: a consumer of each event type payment reacts to. */
export function paymentConsumers(
  payments: PaymentUseCases,
  options?: PaymentConsumersOptions,
): AnyServiceConsumer<PaymentEventType>[] {
  return consumersOf(
    consumerGroup,
    {
      'order.placed': onOrderPlaced(payments),
      'payment.requested': onPaymentRequested(payments),
      'payment.refund_requested': onRefundRequested(payments),
    },
    options,
  )
}
