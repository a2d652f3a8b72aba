// The order as the owner of its processes (@meridian/process): the statement piece that selects its row (locked by
// the module for a decision) and reads what the decision and its commands need (content and items: one round trip with the instance), and the
// piece that writes the status a decision changed. SQL only.
import type { OrderStatus } from '@meridian/contracts'
import type { Fragment, Queryable } from '@meridian/db'
import { fromItemJson, type ItemJson, itemsJson, type OrderContent } from './orders-repository.ts'

/**
 * A select of the order `orderId`: the module locks it (`for update`) before every change of an order's processes,
 * as a cancel does, so the two never wait on each other in opposite orders; the operators' view reads it as it is.
 */
export const orderOwnerRow = (orderId: string, sql: Queryable): Fragment => sql`
  select o.id, o.customer_id, o.status, o.total_cents, o.shipping_address, o.payment_token,
    ${itemsJson(sql)} as items
  from orders o where o.id = ${orderId}::uuid`

/** The order as its row gives it (to_jsonb: snake_case keys; bigints inside JSON are numbers). */
export function readOrderRow(row: Record<string, unknown>): OrderContent {
  return {
    id: String(row.id),
    customerId: String(row.customer_id),
    status: row.status as OrderStatus,
    totalCents: Number(row.total_cents),
    shippingAddress: row.shipping_address as OrderContent['shippingAddress'],
    paymentToken: (row.payment_token as string | null) ?? null,
    items: (row.items as ItemJson[]).map(fromItemJson),
  }
}

/** The order's new status, and its version moved on. */
export const writeOrderStatus = (orderId: string, status: OrderStatus, sql: Queryable): Fragment => sql`
  update orders set status = ${status}, version = version + 1, updated_at = now() where id = ${orderId}::uuid`
