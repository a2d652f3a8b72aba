// The events the saga's commands go out as: the compensations and outcomes from the saga's instance alone, the
// steps' requests from the order's content too (never card data: a provider token at most).
import { type EventType, fromMinorUnits, type OrderStatus } from '@meridian/contracts'
import { type CatalogueEvent, createEvent } from '@meridian/events'
import type { OrderContent } from '../data/orders-repository.ts'
import { serviceSource } from './order-links.ts'
import type { SagaCommand, SagaInstance } from './saga-machine.ts'

/**
 * The event a command about `orderId` (as the fact named it) is sent as, built from the order its decision read (the
 * steps need its content, never card data) and the instance the decision leads to (its ids, and the order's status
 * once the decision is applied).
 */
export function commandEvent(
  command: SagaCommand,
  orderId: string,
  order: OrderContent,
  instance: SagaInstance,
): CatalogueEvent<EventType> {
  const event = <Type extends EventType>(type: Type, data: CatalogueEvent<Type>['data']) =>
    createEvent(type, data, { source: serviceSource })
  const reason =
    'reason' in command && command.reason ? command.reason : (instance.failureReason ?? 'compensation')
  switch (command.type) {
    case 'order.failed':
      return event('order.failed', { orderId, reason: command.reason, failedStep: command.failedStep })
    case 'order.cancelled':
      return event('order.cancelled', { orderId, reason: command.reason })
    case 'order.completed':
      return event('order.completed', { orderId })
    case 'inventory.release_requested':
      return event('inventory.release_requested', { orderId, reason, attempt: command.attempt })
    case 'payment.refund_requested':
      return event('payment.refund_requested', { orderId, reason, attempt: command.attempt })
    case 'payment.requested':
      return event('payment.requested', {
        ...placedContent(order, instance.orderStatus),
        attempt: command.attempt,
      })
    case 'inventory.reservation_requested':
      return event('inventory.reservation_requested', {
        ...placedContent(order, instance.orderStatus),
        paymentId: instance.paymentId ?? 'unknown',
        attempt: command.attempt,
      })
    case 'shipment.requested':
      return event('shipment.requested', {
        orderId,
        reservationId: instance.reservationId ?? 'unknown',
        items: order.items.map(({ productId, quantity }) => ({ productId, quantity })),
        customerId: order.customerId,
        shippingAddress: order.shippingAddress,
        attempt: command.attempt,
      })
  }
}

/**
 * The order.placed content of an order: what payment.requested and inventory.reservation_requested carry, with the
 * order's status as the decision leaves it.
 */
function placedContent(order: OrderContent, status: OrderStatus) {
  return {
    orderId: order.id,
    customerId: order.customerId,
    total: fromMinorUnits(order.totalCents),
    items: order.items.map((item) => ({
      productId: item.productId,
      quantity: item.quantity,
      price: fromMinorUnits(item.priceCents),
      name: item.name,
    })),
    status,
    shippingAddress: order.shippingAddress,
    ...(order.paymentToken ? { payment: { token: order.paymentToken } } : {}),
  }
}
