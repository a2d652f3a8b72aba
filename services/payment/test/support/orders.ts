// Orders as payment hears of them in the tests: order.placed data, handed to the order step the way its consumer
// does (in a transaction), which records the order — charged with its token, or, without one, answered
// payment.failed 'no payment method', so that it awaits a customer's payment (POST /payments).
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import type { PaymentTestApp } from './app.ts'

export interface PlacedOrderData {
  orderId: string
  customerId: string
  total: number
  items: { productId: string; quantity: number; price: number }[]
  customerEmail: string
  shippingAddress: { street: string; city: string; zip: string }
  payment?: { token: string }
}

/** order.placed data as the order service sends it (no payment token unless given). */
export const placedOrder = (
  overrides: Partial<PlacedOrderData> & { token?: string } = {},
): PlacedOrderData => {
  const { token, ...rest } = overrides
  return {
    orderId: randomUUID(),
    customerId: randomUUID(),
    total: 19.99,
    items: [{ productId: randomUUID(), quantity: 1, price: 19.99 }],
    customerEmail: 'buyer@example.com',
    shippingAddress: { street: '1 Main Street', city: 'Springfield', zip: '12345' },
    ...(token === undefined ? {} : { payment: { token } }),
    ...rest,
  }
}

/** The order step handles order.placed as its consumer does. */
export const handleOrderPlaced = (payment: PaymentTestApp, data: PlacedOrderData) =>
  transaction(payment.sql, (tx) => payment.payments.chargeOrder(data, tx))

/** An order placed without a payment method: payment.failed went out, the customer may pay it now. */
export async function orderAwaitingPayment(
  payment: PaymentTestApp,
  overrides: Partial<PlacedOrderData> = {},
): Promise<PlacedOrderData> {
  const data = placedOrder(overrides)
  const answered = await handleOrderPlaced(payment, data)
  if (answered.outcome !== 'failed') throw new Error(`order ${data.orderId} was ${answered.outcome}`)
  return data
}

/** The saga cancelled or failed the order: its refund was requested (payment.refund_requested). */
export const requestRefund = (
  payment: PaymentTestApp,
  orderId: string,
  reason = 'cancelled by the customer',
) => transaction(payment.sql, (tx) => payment.payments.refundOrder({ orderId, reason }, tx))

export interface OutboxRow {
  eventType: string
  payload: { type: string; source: string; data: Record<string, unknown> }
}

/** The events payment appended about an order, oldest first. */
export const outboxOf = (payment: PaymentTestApp, orderId: string) =>
  payment.sql<OutboxRow[]>`select event_type, payload from outbox where aggregate_id = ${orderId} order by id`
