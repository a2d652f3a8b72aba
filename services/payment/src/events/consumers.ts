// Payment's consumers: one typed handler per consumed event type, each a call of a payment use case in the
// consumer's transaction (the one that records the event in the inbox), so effect and record commit together. The
// provider is called inside that transaction: the inbox makes a redelivery a no-op, and the provider's idempotency
// key (`order-<orderId>`, `refund-<orderId>`) makes a retry after a timeout charge or refund once.
import type { EventType } from '@meridian/contracts'
import { type AnyServiceConsumer, consumer, type EventHandler } from '@meridian/events'
import type { PaymentUseCases } from '../domain/payments.ts'

/** The consumer group of the payment service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'payment'

/** order.placed: the order is charged; payment.processed or payment.failed follows. */
export const onOrderPlaced =
  (payments: PaymentUseCases): EventHandler<'order.placed'> =>
  async (event, tx) => {
    await payments.chargeOrder(event.data, tx)
  }

/** order.cancelled: the order's payment is refunded. */
export const onOrderCancelled =
  (payments: PaymentUseCases): EventHandler<'order.cancelled'> =>
  async (event, tx) => {
    await payments.refundOrder(event.data, tx)
  }

/** order.failed: the saga's compensation, the order's payment is refunded. */
export const onOrderFailed =
  (payments: PaymentUseCases): EventHandler<'order.failed'> =>
  async (event, tx) => {
    await payments.refundOrder(event.data, tx)
  }

export type PaymentEventType = 'order.placed' | 'order.cancelled' | 'order.failed'

export interface PaymentConsumersOptions {
  /** the consumer group; default 'payment' */
  group?: string
  /** topics read instead of the event types, for isolation (tests); a service reads its event types */
  topics?: Partial<Record<PaymentEventType, string>>
}

/** What main.ts hands to eventsPlugin: a consumer of each event type payment reacts to. */
export function paymentConsumers(
  payments: PaymentUseCases,
  { group = consumerGroup, topics = {} }: PaymentConsumersOptions = {},
): AnyServiceConsumer<PaymentEventType>[] {
  const topicOf = <Type extends PaymentEventType & EventType>(type: Type) =>
    topics[type] === undefined ? {} : { topic: topics[type] }
  return [
    consumer({ type: 'order.placed', group, handler: onOrderPlaced(payments), ...topicOf('order.placed') }),
    consumer({
      type: 'order.cancelled',
      group,
      handler: onOrderCancelled(payments),
      ...topicOf('order.cancelled'),
    }),
    consumer({ type: 'order.failed', group, handler: onOrderFailed(payments), ...topicOf('order.failed') }),
  ]
}
