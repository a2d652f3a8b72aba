// Shipping's consumer: the saga's shipment.requested, a call of the shipment use case in the consumer's transaction
// (the one that records the event in the inbox), so the shipment, its shipment.created and the record commit
// together. The shipment step is the saga's command, not a reaction to inventory.reserved: the order service sends
// shipment.requested in the transaction that holds the order's row when its stock is reserved, so a customer's cancel
// (which takes that row too) and a shipment never both happen.
import type { EventType } from '@meridian/contracts'
import { type AnyServiceConsumer, consumer, type EventHandler } from '@meridian/events'
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
      type: 'shipment.requested',
      group,
      handler: onShipmentRequested(shipments),
      ...topicOf('shipment.requested'),
    }),
  ]
}
