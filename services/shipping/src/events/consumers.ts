// Shipping's consumers: one typed handler per consumed event type, each a call of the shipment use case in the
// consumer's transaction (the one that records the event in the inbox), so the shipment, its shipment.created and the
// record commit together.
import type { EventType } from '@meridian/contracts'
import { type AnyServiceConsumer, consumer, type EventHandler } from '@meridian/events'
import type { ShipmentUseCases } from '../domain/shipments.ts'

/** The consumer group of the shipping service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'shipping'

/** inventory.reserved: the order's stock is held, so its shipment is created (a redelivery is the inbox's to skip). */
export const onInventoryReserved =
  (shipments: ShipmentUseCases): EventHandler<'inventory.reserved'> =>
  async (event, tx) => {
    await shipments.createOrderShipment(event.data, tx)
  }

/**
 * shipment.requested: the saga asks again (it heard no shipment.created in time). The shipment is created if it is
 * not there yet; if it is, shipment.created is appended again so that the saga gets its answer.
 */
export const onShipmentRequested =
  (shipments: ShipmentUseCases): EventHandler<'shipment.requested'> =>
  async (event, tx) => {
    const { attempt: _attempt, ...order } = event.data
    await shipments.createOrderShipment(order, tx, { announceExisting: true })
  }

export type ShippingEventType = 'inventory.reserved' | 'shipment.requested'

export interface ShippingConsumersOptions {
  /** the consumer group; default 'shipping' */
  group?: string
  /** topics read instead of the event types, for isolation (tests); a service reads its event types */
  topics?: Partial<Record<ShippingEventType, string>>
}

/** What main.ts hands to eventsPlugin: a consumer of each event type shipping reacts to. */
export function shippingConsumers(
  shipments: ShipmentUseCases,
  { group = consumerGroup, topics = {} }: ShippingConsumersOptions = {},
): AnyServiceConsumer<ShippingEventType>[] {
  const topicOf = <Type extends ShippingEventType & EventType>(type: Type) =>
    topics[type] === undefined ? {} : { topic: topics[type] }
  return [
    consumer({
      type: 'inventory.reserved',
      group,
      handler: onInventoryReserved(shipments),
      ...topicOf('inventory.reserved'),
    }),
    consumer({
      type: 'shipment.requested',
      group,
      handler: onShipmentRequested(shipments),
      ...topicOf('shipment.requested'),
    }),
  ]
}
