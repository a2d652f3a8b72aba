// The events the saga's commands go out as: the compensations and outcomes from the saga's instance alone, the
// steps' requests from the order's content too (never card data: a provider token at most).
import { type EventType, fromMinorUnits } from '@meridian/contracts'
import type { Queryable } from '@meridian/db'
import { type CatalogueEvent, createEvent } from '@meridian/events'
import type { OrderRecord, OrdersRepository } from '../data/orders-repository.ts'
import { serviceSource } from './order-links.ts'
import type { SagaCommand, SagaInstance } from './saga.ts'

/** The event a command is sent as, built from the order (the steps need its content, never card data). */
export async function commandEvent(
  orders: Pick<OrdersRepository, 'findById' | 'paymentTokenOf'>,
  command: SagaCommand,
  orderId: string,
  instance: SagaInstance,
  tx: Queryable,
): Promise<CatalogueEvent<EventType>> {
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
    default:
  }
  const order = await orders.findById(orderId, tx)
  if (!order) throw new Error(`order ${orderId} has a saga but no row`)
  const placed = placedContent(order, await orders.paymentTokenOf(orderId, tx))
  switch (command.type) {
    case 'payment.requested':
      return event('payment.requested', { ...placed, attempt: command.attempt })
    case 'inventory.reservation_requested':
      return event('inventory.reservation_requested', {
        ...placed,
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

/** The order.placed content of an order: what payment.requested and inventory.reservation_requested carry. */
function placedContent(order: OrderRecord, paymentToken: string | null) {
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
    status: order.status,
    shippingAddress: order.shippingAddress,
    ...(paymentToken ? { payment: { token: paymentToken } } : {}),
  }
}
