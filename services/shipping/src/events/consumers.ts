// Shipping's consumer: the saga's shipment.requested, a call of the shipment use case in the consumer's transaction
// (the one that records the event in the inbox), so the shipment, its shipment.created and the record commit
// together. The shipment step is the saga's command, not a reaction to inventory.reserved: the order service sends
// shipment.requested in the transaction that holds the order's row when its stock is reserved, so a customer's cancel
// (which takes that row too) and a shipment never both happen.
import {
  type AnyServiceConsumer,
  type ConsumersOptions,
  consumersOf,
  type EventHandler,
} from '@meridian/events'
import type { ShipmentUseCases } from '../domain/shipments.ts'

/** The consumer group of the shipping service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'shipping'

/**
 * shipment.requested: the saga asks for the reserved order's shipment (first when its stock is reserved, again when
 * it heard no shipment.created in time). The shipment is created if it is not there yet; if it is, shipment.created
 * is appended again so that the saga gets its answer.
 */
export const onShipmentRequested =
  (shipments: ShipmentUseCases): EventHandler<'shipment.requested'> =>
  async (event, tx) => {
    const { attempt: _attempt, ...order } = event.data
    await shipments.createOrderShipment(order, tx, { announceExisting: true })
  }

export type ShippingEventType = 'shipment.requested'

export type ShippingConsumersOptions = ConsumersOptions<ShippingEventType>

/** What the app's event backbone runs: a consumer of each event type shipping reacts to. */
export function shippingConsumers(
  shipments: ShipmentUseCases,
  options?: ShippingConsumersOptions,
): AnyServiceConsumer<ShippingEventType>[] {
  return consumersOf(consumerGroup, { 'shipment.requested': onShipmentRequested(shipments) }, options)
}
