// The events an exchange's commands go out as, from its row and the instance. Its own payment, reservation and
// shipment go under the exchange's id as their orderId (payment, inventory and shipping know orders, not exchanges:
// to them it is an order of the replacements); the returned goods' restock and a price fall's refund name the
// original order, the refund under its key `exchange-<id>`.
import { type EventType, fromMinorUnits } from '@meridian/contracts'
import { type CatalogueEvent, createEvent } from '@meridian/events'
import type { CommandContext } from '@meridian/process'
import type { ExchangeItemRecord, ExchangeRecord } from '../data/exchanges-repository.ts'
import type { ExchangeCommand, ExchangeInstance } from './exchange-machine.ts'
import { serviceSource } from './order-links.ts'

/** The key a price fall is refunded under, once (payment's provider key: `refund-exchange-<id>`). */
export const exchangeRefundKey = (exchangeId: string) => `exchange-${exchangeId}`

/** An exchanged line as clients and events read it: its prices in major units. */
export const exchangedItem = (item: ExchangeItemRecord) => ({
  productId: item.productId,
  quantity: item.quantity,
  price: fromMinorUnits(item.priceCents),
  name: item.name,
  replacementProductId: item.replacementProductId,
  replacementPrice: fromMinorUnits(item.replacementPriceCents),
  replacementName: item.replacementName,
})

/** The exchange's replacements as an order of its own: what its reservation, charge and shipment carry. */
function replacementOrder(exchange: ExchangeRecord, totalCents: number) {
  return {
    orderId: exchange.id,
    customerId: exchange.customerId,
    total: fromMinorUnits(totalCents),
    items: exchange.items.map((item) => ({
      productId: item.replacementProductId,
      quantity: item.quantity,
      price: fromMinorUnits(item.replacementPriceCents),
      name: item.replacementName,
    })),
    shippingAddress: exchange.shippingAddress,
  }
}

/** The event an exchange's command goes out as, from its row (the owner) and the instance its decision leads to. */
export function exchangeCommandEvent(
  command: ExchangeCommand,
  { instance, owner }: CommandContext<ExchangeInstance, ExchangeRecord>,
): CatalogueEvent<EventType> {
  const event = <Type extends EventType>(type: Type, data: CatalogueEvent<Type>['data']) =>
    createEvent(type, data, { source: serviceSource })
  const about = { exchangeId: owner.id, orderId: owner.orderId, customerId: owner.customerId }
  const amounts = { charge: fromMinorUnits(owner.chargeCents), refund: fromMinorUnits(owner.refundCents) }
  const returned = owner.items.map(({ productId, quantity }) => ({ productId, quantity }))
  const replacementsCents = owner.items.reduce(
    (sum, item) => sum + item.replacementPriceCents * item.quantity,
    0,
  )
  const attempt = 'attempt' in command ? command.attempt : 1
  const reason = instance.failureReason ?? `exchange ${owner.id}`
  switch (command.type) {
    case 'exchange.requested':
      return event('exchange.requested', {
        ...about,
        items: owner.items.map(exchangedItem),
        ...amounts,
      })
    case 'exchange.awaiting_goods':
      return event('exchange.awaiting_goods', { ...about, items: returned })
    case 'exchange.completed':
      return event('exchange.completed', {
        ...about,
        ...amounts,
        ...(instance.shipmentId ? { shipmentId: instance.shipmentId } : {}),
      })
    case 'exchange.failed':
      return event('exchange.failed', {
        ...about,
        reason: instance.failureReason ?? 'failed',
        failedStep: instance.failedStep ?? 'exchange',
      })
    case 'inventory.reservation_requested':
      // reserved before anything is paid: the payment id it names is none yet
      return event('inventory.reservation_requested', {
        ...replacementOrder(owner, replacementsCents),
        paymentId: 'none',
        attempt,
      })
    case 'payment.requested':
      return event('payment.requested', {
        ...replacementOrder(owner, owner.chargeCents),
        ...(owner.paymentToken ? { payment: { token: owner.paymentToken } } : {}),
        attempt,
      })
    case 'inventory.restock_requested.v2':
      return event('inventory.restock_requested.v2', {
        restockId: owner.id,
        orderId: owner.orderId,
        items: returned,
        reason: `exchange ${owner.id}`,
        attempt,
      })
    case 'payment.refund_requested':
      return event('payment.refund_requested', {
        orderId: owner.orderId,
        reason: `exchange ${owner.id}: the replacements cost less`,
        attempt,
        amount: fromMinorUnits(owner.refundCents),
        refundKey: exchangeRefundKey(owner.id),
      })
    case 'shipment.requested':
      return event('shipment.requested', {
        orderId: owner.id,
        reservationId: instance.reservationId ?? 'unknown',
        items: owner.items.map((item) => ({ productId: item.replacementProductId, quantity: item.quantity })),
        customerId: owner.customerId,
        shippingAddress: owner.shippingAddress,
        attempt,
      })
    case 'refund_charge':
      // the compensation: all of the exchange's own charge (nothing when none was made: answered with 0)
      return event('payment.refund_requested', { orderId: owner.id, reason, attempt })
    case 'inventory.release_requested':
      return event('inventory.release_requested', { orderId: owner.id, reason, attempt })
  }
}
