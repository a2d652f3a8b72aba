// Reservation use cases: holding an order's stock when it is paid (all lines or none, again when the saga requests
// it), releasing it when the saga compensates, and letting it leave when it is shipped. Each runs in the caller's
// transaction (a consumer's, which also records the event in the inbox), so the stock, the reservation and the
// outbox row commit together; reserving and releasing one order take its advisory lock, so they never interleave.
// Each sends as few statements as it can (a consumer's cost is its round trips to PostgreSQL): the lock and the
// reads that follow it go out together, and the stock's change is one statement.
import type { EventData } from '@meridian/contracts'
import type { TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { ReservationRecord, ReservationsRepository } from '../data/reservations-repository.ts'
import { findShortage, isUuid, mergeLines, type ShortageReason, type StockLine } from './stock-rules.ts'

/** The name inventory signs its events with (the envelope's source). */
export const serviceSource = 'inventory'

/** Reason of inventory.failed when the order's reservation was released before it was requested again. */
export const reservationReleased = 'the reservation was released'

/** Reason of inventory.failed when the order's release was requested before its stock was reserved. */
export const orderCancelled = 'the order was cancelled'

export interface OrderToReserve {
  orderId: string
  items: readonly StockLine[]
  /** carried on to inventory.reserved, for the shipment step */
  customerId?: string
  shippingAddress?: EventData<'inventory.reserved'>['shippingAddress']
}

export type ReserveOutcome =
  | { outcome: 'reserved'; reservationId: string; items: StockLine[] }
  | { outcome: 'failed'; reason: ShortageReason; items: StockLine[] }
  /** the order has a held or shipped reservation already: nothing changed, inventory.reserved appended again */
  | { outcome: 'already reserved'; reservationId: string; items: StockLine[] }
  /** released already, or its release was requested first: nothing reserved, inventory.failed with the reason */
  | { outcome: 'refused'; reason: string }

export type ReleaseOutcome =
  | { outcome: 'released'; reservationId: string }
  /** no held reservation (none, or already released or shipped): inventory.released without reservationId */
  | { outcome: 'nothing held' }

export type ShipOutcome = { outcome: 'shipped'; reservationId: string } | { outcome: 'nothing held' }

/** An order id that is not a uuid names no order (the order service's ids are uuids): the event is bad. */
function assertOrderId(orderId: string): void {
  if (!isUuid(orderId)) throw new Error(`order id '${orderId}' is not a uuid`)
}

export function createReservationUseCases(deps: { reservations: ReservationsRepository }) {
  const { reservations } = deps

  return {
    /**
     * The reservation step of the order saga (payment.processed, and inventory.reservation_requested: the saga asking
     * again after a timeout), in the consumer's transaction and under the order's advisory lock (its release waits
     * for it, and it for a release). Every call answers with an event:
     * - the order has a reservation already: held or shipped, `inventory.reserved` again with the same reservationId
     *   and its lines; released, `inventory.failed` 'the reservation was released';
     * - the order's release was requested already (it came first): nothing reserved, `inventory.failed` 'the order
     *   was cancelled';
     * - else every line is reserved, or none. The product rows are locked in id order (concurrent reservations queue
     *   on the rows they share and never deadlock), each line is checked (the product exists, is active, has the
     *   units available), then available moves to reserved for each line, the reservation and its movements are
     *   written and `inventory.reserved` is appended (with the customer and the shipping address when given, for the
     *   shipment step). If any line fails, nothing changes and `inventory.failed` names the failing lines.
     * The lock and one statement go out together, the statement running once the lock is held: it reads what the
     * order has and, when it has nothing, locks the rows, checks the lines and writes, so the rows stay locked only
     * from there to the commit.
     */
    async reserveOrder(order: OrderToReserve, tx: TransactionSql): Promise<ReserveOutcome> {
      assertOrderId(order.orderId)
      const answerReserved = async (reservationId: string, items: StockLine[]) => {
        const reserved = createEvent(
          'inventory.reserved',
          {
            orderId: order.orderId,
            reservationId,
            items,
            ...(order.customerId === undefined ? {} : { customerId: order.customerId }),
            ...(order.shippingAddress === undefined ? {} : { shippingAddress: order.shippingAddress }),
          },
          { source: serviceSource },
        )
        await appendToOutbox(tx, reserved, { aggregateId: order.orderId })
      }
      const refuse = async (reason: string): Promise<ReserveOutcome> => {
        const failed = createEvent(
          'inventory.failed',
          { orderId: order.orderId, reason },
          { source: serviceSource },
        )
        await appendToOutbox(tx, failed, { aggregateId: order.orderId })
        return { outcome: 'refused', reason }
      }
      const answerEarlier = async (earlier: ReservationRecord): Promise<ReserveOutcome> => {
        if (earlier.status === 'released') return refuse(reservationReleased)
        const items = earlier.lines.map(({ productId, quantity }) => ({ productId, quantity }))
        await answerReserved(earlier.id, items)
        return { outcome: 'already reserved', reservationId: earlier.id, items }
      }

      const lines = mergeLines(order.items)
      const [, held] = await Promise.all([
        reservations.lockOrder(order.orderId, tx),
        reservations.holdStock(
          {
            orderId: order.orderId,
            lines: lines.filter((line) => isUuid(line.productId)),
            lineCount: lines.length,
            reason: 'reserved for order',
          },
          tx,
        ),
      ])
      if (held.earlier) return answerEarlier(held.earlier)
      if (held.releaseRequested) return refuse(orderCancelled)

      const shortage = findShortage(lines, new Map(held.stock.map((product) => [product.id, product])))
      // the statement applies findShortage's rule in SQL: were they ever to disagree, nothing is committed
      if ((shortage === undefined) !== held.reservable) {
        throw new Error(`order ${order.orderId}: the stock check and the held stock disagree`)
      }
      if (shortage) {
        const failed = createEvent(
          'inventory.failed',
          { orderId: order.orderId, reason: shortage.reason, items: shortage.items },
          { source: serviceSource },
        )
        await appendToOutbox(tx, failed, { aggregateId: order.orderId })
        return { outcome: 'failed', ...shortage }
      }
      if (held.reservationId === undefined) {
        // a reservation of the order committed meanwhile (not under the order lock): it stands, answer with it
        const recorded = await reservations.findByOrder(order.orderId, tx)
        if (!recorded) throw new Error(`order ${order.orderId} has neither a new nor a recorded reservation`)
        return answerEarlier(recorded)
      }
      await answerReserved(held.reservationId, lines)
      return { outcome: 'reserved', reservationId: held.reservationId, items: lines }
    },

    /**
     * The saga's compensation (inventory.release_requested), in the consumer's transaction and under the order's
     * advisory lock (a reservation being made is waited for, then released): the request is recorded (a later
     * reservation of the order is not made), the order's held stock goes back (reserved -> available), the
     * reservation is marked released and `inventory.released` is appended with its id. It always answers: when
     * nothing is held (never reserved, released already, or shipped) `inventory.released` has no reservationId.
     * The lock, the request and the release go out together, run in that order.
     */
    async releaseOrder(
      order: { orderId: string; reason: string },
      tx: TransactionSql,
    ): Promise<ReleaseOutcome> {
      const answer = async (reservationId?: string) => {
        const released = createEvent(
          'inventory.released',
          {
            orderId: order.orderId,
            ...(reservationId === undefined ? {} : { reservationId }),
            reason: order.reason,
          },
          { source: serviceSource },
        )
        await appendToOutbox(tx, released, { aggregateId: order.orderId })
      }
      // an id that is not a uuid names no order (none was ever reserved): answered, nothing recorded
      if (!isUuid(order.orderId)) {
        await answer()
        return { outcome: 'nothing held' }
      }
      const [, , reservationId] = await Promise.all([
        reservations.lockOrder(order.orderId, tx),
        reservations.recordReleaseRequest(order.orderId, order.reason, tx),
        reservations.settleHeld(
          order.orderId,
          { status: 'released', reason: `released: ${order.reason}`.slice(0, 300) },
          tx,
        ),
      ])
      await answer(reservationId)
      return reservationId === undefined
        ? { outcome: 'nothing held' }
        : { outcome: 'released', reservationId }
    },

    /** The shipped order's held stock leaves the warehouse (reserved goes down) and the reservation is shipped. */
    async shipOrder(order: { orderId: string }, tx: TransactionSql): Promise<ShipOutcome> {
      if (!isUuid(order.orderId)) return { outcome: 'nothing held' }
      const reservationId = await reservations.settleHeld(
        order.orderId,
        { status: 'shipped', reason: 'shipped' },
        tx,
      )
      return reservationId === undefined ? { outcome: 'nothing held' } : { outcome: 'shipped', reservationId }
    },
  }
}

export type ReservationUseCases = ReturnType<typeof createReservationUseCases>
