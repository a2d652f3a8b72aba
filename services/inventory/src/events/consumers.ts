// Inventory's consumers: one typed handler per consumed event type, each a call of a reservation use case in the
// consumer's transaction (the one that records the event in the inbox), so effect and record commit together.
import type { EventType } from '@meridian/contracts'
import { type AnyServiceConsumer, consumer, type EventHandler } from '@meridian/events'
import type { ReservationUseCases } from '../domain/reservations.ts'

/** The consumer group of the inventory service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'inventory'

/** payment.processed: the order is paid, so its stock is reserved (all lines or none). */
export const onPaymentProcessed =
  (reservations: ReservationUseCases): EventHandler<'payment.processed'> =>
  async (event, tx) => {
    await reservations.reserveOrder(event.data, tx)
  }

/** order.cancelled: the order's held stock goes back. */
export const onOrderCancelled =
  (reservations: ReservationUseCases): EventHandler<'order.cancelled'> =>
  async (event, tx) => {
    await reservations.releaseOrder(event.data, tx)
  }

/** order.failed: the saga's compensation, the order's held stock goes back. */
export const onOrderFailed =
  (reservations: ReservationUseCases): EventHandler<'order.failed'> =>
  async (event, tx) => {
    await reservations.releaseOrder(event.data, tx)
  }

/** shipment.created: the order's held stock leaves the warehouse. */
export const onShipmentCreated =
  (reservations: ReservationUseCases): EventHandler<'shipment.created'> =>
  async (event, tx) => {
    await reservations.shipOrder(event.data, tx)
  }

export type InventoryEventType = 'payment.processed' | 'order.cancelled' | 'order.failed' | 'shipment.created'

export interface InventoryConsumersOptions {
  /** the consumer group; default 'inventory' */
  group?: string
  /** topics read instead of the event types, for isolation (tests); a service reads its event types */
  topics?: Partial<Record<InventoryEventType, string>>
}

/** What main.ts hands to eventsPlugin: a consumer of each event type inventory reacts to. */
export function inventoryConsumers(
  reservations: ReservationUseCases,
  { group = consumerGroup, topics = {} }: InventoryConsumersOptions = {},
): AnyServiceConsumer<InventoryEventType>[] {
  const topicOf = <Type extends InventoryEventType & EventType>(type: Type) =>
    topics[type] === undefined ? {} : { topic: topics[type] }
  return [
    consumer({
      type: 'payment.processed',
      group,
      handler: onPaymentProcessed(reservations),
      ...topicOf('payment.processed'),
    }),
    consumer({
      type: 'order.cancelled',
      group,
      handler: onOrderCancelled(reservations),
      ...topicOf('order.cancelled'),
    }),
    consumer({
      type: 'order.failed',
      group,
      handler: onOrderFailed(reservations),
      ...topicOf('order.failed'),
    }),
    consumer({
      type: 'shipment.created',
      group,
      handler: onShipmentCreated(reservations),
      ...topicOf('shipment.created'),
    }),
  ]
}
