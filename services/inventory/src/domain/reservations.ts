// Reservation use cases: holding an order's stock when it is paid (all lines or none), releasing it when the order
// is cancelled or fails, and letting it leave when it is shipped. Each runs in the caller's transaction (a consumer's,
// which also records the event in the inbox), so the stock, the reservation and the outbox row commit together.
import type { TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { ProductsRepository, StockMovement } from '../data/products-repository.ts'
import type { ReservationsRepository } from '../data/reservations-repository.ts'
import { findShortage, isUuid, mergeLines, type ShortageReason, type StockLine } from './stock-rules.ts'

/** The name inventory signs its events with (the envelope's source). */
export const serviceSource = 'inventory'

export interface OrderToReserve {
  orderId: string
  items: readonly StockLine[]
}

export type ReserveOutcome =
  | { outcome: 'reserved'; reservationId: string; items: StockLine[] }
  | { outcome: 'failed'; reason: ShortageReason; items: StockLine[] }
  /** the order has a reservation already (a redelivery): nothing changed, nothing appended */
  | { outcome: 'already reserved' }

export type ReleaseOutcome =
  | { outcome: 'released'; reservationId: string }
  /** no held reservation (none, or already released or shipped): nothing changed, nothing appended */
  | { outcome: 'nothing held' }

export type ShipOutcome = { outcome: 'shipped'; reservationId: string } | { outcome: 'nothing held' }

/** An order id that is not a uuid names no order (the order service's ids are uuids): the event is bad. */
function assertOrderId(orderId: string): void {
  if (!isUuid(orderId)) throw new Error(`order id '${orderId}' is not a uuid`)
}

export function createReservationUseCases(deps: {
  products: ProductsRepository
  reservations: ReservationsRepository
}) {
  const { products, reservations } = deps

  /** Locks the products of a held reservation in id order and applies `movements` to them, audited. */
  async function moveStock(tx: TransactionSql, movements: StockMovement[]): Promise<void> {
    await products.lockStock(
      movements.map((movement) => movement.productId),
      tx,
    )
    await products.applyStockChanges(movements, tx)
    await products.recordMovements(movements, tx)
  }

  return {
    /**
     * Reserves every line of a paid order, or none. The product rows are locked in id order (concurrent reservations
     * queue on the rows they share and never deadlock), each line is checked (the product exists, is active, has the
     * units available), then available moves to reserved for each line, the reservation and its movements are
     * written and `inventory.reserved` is appended to the outbox. If any line fails, nothing changes and
     * `inventory.failed` names the failing lines. An order reserved already is left alone.
     */
    async reserveOrder(order: OrderToReserve, tx: TransactionSql): Promise<ReserveOutcome> {
      assertOrderId(order.orderId)
      if (await reservations.findByOrder(order.orderId, tx)) return { outcome: 'already reserved' }

      const lines = mergeLines(order.items)
      const locked = await products.lockStock(lines.map((line) => line.productId).filter(isUuid), tx)
      const shortage = findShortage(lines, new Map(locked.map((product) => [product.id, product])))
      if (shortage) {
        const failed = createEvent(
          'inventory.failed',
          { orderId: order.orderId, reason: shortage.reason, items: shortage.items },
          { source: serviceSource },
        )
        await appendToOutbox(tx, failed, { aggregateId: order.orderId })
        return { outcome: 'failed', ...shortage }
      }

      // a concurrent reservation of the same order committed between the check and here: it stands, this one is void
      const reservationId = await reservations.insertHeld(order.orderId, lines, tx)
      if (reservationId === undefined) return { outcome: 'already reserved' }
      const movements = lines.map((line) => ({
        productId: line.productId,
        deltaAvailable: -line.quantity,
        deltaReserved: line.quantity,
        reason: 'reserved for order',
        orderId: order.orderId,
      }))
      await products.applyStockChanges(movements, tx)
      await products.recordMovements(movements, tx)
      const reserved = createEvent(
        'inventory.reserved',
        { orderId: order.orderId, reservationId, items: lines },
        { source: serviceSource },
      )
      await appendToOutbox(tx, reserved, { aggregateId: order.orderId })
      return { outcome: 'reserved', reservationId, items: lines }
    },

    /**
     * Gives a cancelled or failed order's held stock back (reserved -> available), marks the reservation released
     * and appends `inventory.released`. Nothing held, nothing done: releasing twice, or an order that never
     * reserved, appends nothing.
     */
    async releaseOrder(
      order: { orderId: string; reason: string },
      tx: TransactionSql,
    ): Promise<ReleaseOutcome> {
      if (!isUuid(order.orderId)) return { outcome: 'nothing held' }
      const reservation = await reservations.findByOrder(order.orderId, tx, { lock: true })
      if (reservation?.status !== 'held') return { outcome: 'nothing held' }
      await moveStock(
        tx,
        reservation.lines.map((line) => ({
          productId: line.productId,
          deltaAvailable: line.quantity,
          deltaReserved: -line.quantity,
          reason: `released: ${order.reason}`.slice(0, 300),
          orderId: order.orderId,
        })),
      )
      await reservations.setStatus(reservation.id, 'released', tx)
      const released = createEvent(
        'inventory.released',
        { orderId: order.orderId, reservationId: reservation.id, reason: order.reason },
        { source: serviceSource },
      )
      await appendToOutbox(tx, released, { aggregateId: order.orderId })
      return { outcome: 'released', reservationId: reservation.id }
    },

    /** The shipped order's held stock leaves the warehouse (reserved goes down) and the reservation is shipped. */
    async shipOrder(order: { orderId: string }, tx: TransactionSql): Promise<ShipOutcome> {
      if (!isUuid(order.orderId)) return { outcome: 'nothing held' }
      const reservation = await reservations.findByOrder(order.orderId, tx, { lock: true })
      if (reservation?.status !== 'held') return { outcome: 'nothing held' }
      await moveStock(
        tx,
        reservation.lines.map((line) => ({
          productId: line.productId,
          deltaAvailable: 0,
          deltaReserved: -line.quantity,
          reason: 'shipped',
          orderId: order.orderId,
        })),
      )
      await reservations.setStatus(reservation.id, 'shipped', tx)
      return { outcome: 'shipped', reservationId: reservation.id }
    },
  }
}

export type ReservationUseCases = ReturnType<typeof createReservationUseCases>
