// The per-order lock that keeps an order's events and the event that tells its customer from passing each other
// unseen. The orders' customers themselves (order_customers, a projection of order.placed, and of exchange.requested
// for the exchange's own id, which its payment and shipment carry as their orderId) are written and read by the
// notifications' own statements (notifications-repository.ts), each in one round trip.
import { lockKey, type TransactionSql } from '@meridian/db'

export function createOrderCustomersRepository() {
  return {
    /**
     * Locks the order (or the exchange) for the rest of the transaction. An order's event that finds no customer and
     * stores its notification pending, and the order.placed (exchange.requested) that records the customer and
     * resolves the pending ones, both take it first: otherwise each could miss the other's uncommitted row, and a
     * pending notification would wait for ever.
     */
    async lockOrder(orderId: string, tx: TransactionSql): Promise<void> {
      await lockKey(tx, `notification.order:${orderId}`)
    },
  }
}

export type OrderCustomersRepository = ReturnType<typeof createOrderCustomersRepository>
