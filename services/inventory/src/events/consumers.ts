// Inventory's consumers: one typed handler per consumed event type, each a call of a reservation use case in the
// consumer's transaction (the one that records the event in the inbox), so effect and record commit together.
// The forward step is choreographed (payment.processed reserves); the order saga's process manager (in order) sends
// the commands: inventory.reservation_requested (reserve again after a timeout) and inventory.release_requested (the
// compensation). Each command is always answered (inventory.reserved / inventory.failed, inventory.released).
// order.cancelled and order.failed are not consumed: the compensation comes as inventory.release_requested.
// A process (a return's, in order) sends inventory.restock_requested.v2 once goods came back: answered with
// inventory.restocked.v2, the stock put back once per restock id.
import { restockAskedOfV1 } from '@meridian/contracts'
import {
  type AnyServiceConsumer,
  type ConsumersOptions,
  consumersOf,
  type EventHandler,
} from '@meridian/events'
import type { ReservationUseCases } from '../domain/reservations.ts'
import type { RestockUseCases } from '../domain/restocks.ts'

/** The consumer group of the inventory service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'inventory'

/** payment.processed: the order is paid, so its stock is reserved (all lines or none). */
export const onPaymentProcessed =
  (reservations: ReservationUseCases): EventHandler<'payment.processed'> =>
  async (event, tx) => {
    await reservations.reserveOrder(event.data, tx)
  }

/**
 * inventory.reservation_requested: the saga asks again (its reservation step timed out); reserved as on
 * payment.processed, and answered with inventory.reserved (the same reservationId when reserved already) or
 * inventory.failed.
 */
export const onReservationRequested =
  (reservations: ReservationUseCases): EventHandler<'inventory.reservation_requested'> =>
  async (event, tx) => {
    const { attempt: _attempt, ...paid } = event.data
    await reservations.reserveOrder(paid, tx)
  }

/** inventory.release_requested: the saga's compensation, the order's held stock goes back; inventory.released. */
export const onReleaseRequested =
  (reservations: ReservationUseCases): EventHandler<'inventory.release_requested'> =>
  async (event, tx) => {
    await reservations.releaseOrder({ orderId: event.data.orderId, reason: event.data.reason }, tx)
  }

/** shipment.created: the order's held stock leaves the warehouse. */
export const onShipmentCreated =
  (reservations: ReservationUseCases): EventHandler<'shipment.created'> =>
  async (event, tx) => {
    await reservations.shipOrder(event.data, tx)
  }

/**
 * inventory.restock_requested.v2: a process's goods came back; their lines go back in stock once per restock id, and
 * every request (the process asking again, attempt 2, 3…) is answered with inventory.restocked.v2.
 */
export const onRestockRequested =
  (restocks: RestockUseCases): EventHandler<'inventory.restock_requested.v2'> =>
  async (event, tx) => {
    const { attempt: _attempt, ...restock } = event.data
    await restocks.restock(restock, tx)
  }

/**
 * inventory.restock_requested (1.0, from an order service of a release before 0.2): read as its v2 and answered with
 * inventory.restocked 1.0, which that release waits for.
 */
export const onRestockRequestedV1 =
  (restocks: RestockUseCases): EventHandler<'inventory.restock_requested'> =>
  async (event, tx) => {
    const { attempt: _attempt, ...restock } = restockAskedOfV1(event.data)
    await restocks.restock(restock, tx, 'inventory.restocked')
  }

export type InventoryEventType =
  | 'payment.processed'
  | 'inventory.reservation_requested'
  | 'inventory.release_requested'
  | 'shipment.created'
  | 'inventory.restock_requested'
  | 'inventory.restock_requested.v2'

export type InventoryConsumersOptions = ConsumersOptions<InventoryEventType>

/** What the app's event backbone runs: a consumer of each event type inventory reacts to. */
export function inventoryConsumers(
  { reservations, restocks }: { reservations: ReservationUseCases; restocks: RestockUseCases },
  options?: InventoryConsumersOptions,
): AnyServiceConsumer<InventoryEventType>[] {
  return consumersOf(
    consumerGroup,
    {
      'payment.processed': onPaymentProcessed(reservations),
      'inventory.reservation_requested': onReservationRequested(reservations),
      'inventory.release_requested': onReleaseRequested(reservations),
      'shipment.created': onShipmentCreated(reservations),
      'inventory.restock_requested': onRestockRequestedV1(restocks),
      'inventory.restock_requested.v2': onRestockRequested(restocks),
    },
    options,
  )
}
