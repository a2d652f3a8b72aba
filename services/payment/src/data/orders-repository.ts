// The orders payment heard of (migrations/0004): SQL only; every function takes the pool or an open transaction.
// Written from order.placed and payment.requested, and moved on with the payment state that payment.failed and
// payment.processed announce; read by POST /payments (who may pay it, what is due, whether it awaits payment) and by
// GET /payments/{id} (the order's customer reads its payment).
import type { EventData } from '@meridian/contracts'
import type { Queryable } from '@meridian/db'

/** The order.placed content without its payment token: what payment.processed carries (plus paymentId). */
export type ChargedOrderData = Omit<EventData<'order.placed'>, 'payment'>

/** Where an order's payment stands, as payment told the saga. */
export type OrderPaymentState = 'pending' | 'payment_failed' | 'paid'

export interface OrderToPay {
  orderId: string
  customerId: string
  /** what is due: integer minor units */
  amountCents: number
  currency: string
  /** the order.placed content without its payment token: what payment.processed carries */
  orderData: ChargedOrderData
  paymentState: OrderPaymentState
}

export type NewOrderToPay = Omit<OrderToPay, 'paymentState'>

const columns = (sql: Queryable) =>
  sql`order_id, customer_id, amount_cents::float8 as amount_cents, currency, order_data, payment_state`

export function createOrdersRepository(db: Queryable) {
  return {
    /** Records an order the first time payment hears of it; later events of it change nothing here. */
    async record(order: NewOrderToPay, sql: Queryable = db): Promise<void> {
      await sql`
        insert into orders (order_id, customer_id, amount_cents, currency, order_data)
        values (${order.orderId}, ${order.customerId}, ${order.amountCents}, ${order.currency},
          ${sql.json(order.orderData as Parameters<typeof sql.json>[0])})
        on conflict (order_id) do nothing`
    },

    async find(orderId: string, sql: Queryable = db): Promise<OrderToPay | undefined> {
      const [row] = await sql<OrderToPay[]>`select ${columns(sql)} from orders where order_id = ${orderId}`
      return row
    },

    /** payment.failed went out for the order: it awaits a payment (unless it was paid meanwhile). */
    async markPaymentFailed(orderId: string, sql: Queryable = db): Promise<void> {
      await sql`
        update orders set payment_state = 'payment_failed', updated_at = now()
        where order_id = ${orderId} and payment_state = 'pending'`
    },

    /** The order is paid now: true when it was not before (payment.processed is to go out), false otherwise. */
    async markPaid(orderId: string, sql: Queryable = db): Promise<boolean> {
      const moved = await sql`
        update orders set payment_state = 'paid', updated_at = now()
        where order_id = ${orderId} and payment_state <> 'paid'`
      return moved.count > 0
    },
  }
}

export type OrdersRepository = ReturnType<typeof createOrdersRepository>
