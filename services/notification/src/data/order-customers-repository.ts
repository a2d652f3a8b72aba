// The orders' customers (a projection of order.placed) in PostgreSQL, and the per-order lock that keeps an order's
// events and its order.placed from passing each other unseen.
import { lockKey, type Queryable, type TransactionSql } from '@meridian/db'

export function createOrderCustomersRepository(db: Queryable) {
  return {
    /**
     * Locks the order for the rest of the transaction. An order's event that finds no customer and stores its
     * notification pending, and the order.placed that records the customer and resolves the pending ones, both take
     * it first: otherwise each could miss the other's uncommitted row, and a pending notification would wait for ever.
     */
    async lockOrder(orderId: string, tx: TransactionSql): Promise<void> {
      await lockKey(tx, `notification.order:${orderId}`)
    },

    /** Records the order's customer; the first one recorded stays (order.placed is not told twice differently). */
    async record(orderId: string, customerId: string, sql: Queryable = db): Promise<void> {
      await sql`
        insert into order_customers (order_id, customer_id) values (${orderId}, ${customerId})
        on conflict (order_id) do nothing`
    },

    /** The order's customer, when its order.placed has been seen. */
    async customerOf(orderId: string, sql: Queryable = db): Promise<string | undefined> {
      const [row] = await sql<{ customerId: string }[]>`
        select customer_id from order_customers where order_id = ${orderId}`
      return row?.customerId
    },
  }
}

export type OrderCustomersRepository = ReturnType<typeof createOrderCustomersRepository>
