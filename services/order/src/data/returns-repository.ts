// Returns and their lines in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open
// transaction. Also the return as the owner of its process: the piece that locks its row for a decision (with its
// lines, one round trip with the instance) and the piece that writes what a decision changed of it.
import type { ReturnStatus } from '@meridian/contracts'
import type { Fragment, Queryable } from '@meridian/db'

export interface ReturnItemRecord {
  productId: string
  name: string
  quantity: number
  priceCents: number
}

export interface ReturnRecord {
  id: string
  orderId: string
  customerId: string
  status: ReturnStatus
  reason: string
  rejectionReason: string | null
  refundCents: number
  paymentId: string | null
  /** the carrier the goods go back with: only its key may report them received (none: only admins) */
  carrier: string | null
  /** who reported them received: `carrier:<name>`, `user:<subject>` or `api-key:<id>` */
  receivedBy: string | null
  items: ReturnItemRecord[]
  createdAt: Date
  updatedAt: Date
}

export type NewReturn = Pick<
  ReturnRecord,
  'id' | 'orderId' | 'customerId' | 'reason' | 'refundCents' | 'items' | 'carrier'
>

/** What a decision changes of a return. */
export type ReturnChange = Pick<ReturnRecord, 'status' | 'rejectionReason' | 'paymentId'>

type ItemJson = Omit<ReturnItemRecord, 'priceCents'> & { priceCents: string | number }
type ReturnRow = Omit<ReturnRecord, 'refundCents' | 'items'> & {
  refundCents: string | number
  items: ItemJson[]
}

const fromRow = ({ refundCents, items, ...row }: ReturnRow): ReturnRecord => ({
  ...row,
  refundCents: Number(refundCents),
  items: items.map((item) => ({ ...item, priceCents: Number(item.priceCents) })),
})

/** The lines of the return aliased `r`, as a JSON array in line order (a scalar subquery). */
const itemsJson = (sql: Queryable) => sql`(
  select coalesce(json_agg(json_build_object(
           'productId', i.product_id, 'name', i.name, 'quantity', i.quantity, 'priceCents', i.price_cents)
         order by i.line), '[]'::json)
  from return_items i where i.return_id = r.id)`

const returnColumns = (sql: Queryable) => sql`
  r.id, r.order_id, r.customer_id, r.status, r.reason, r.rejection_reason, r.refund_cents, r.payment_id,
  r.carrier, r.received_by, r.created_at, r.updated_at, ${itemsJson(sql)} as items`

/**
 * A select of the return `returnId` with its lines: its process's owner row (the module locks it, `for update`, for a
 * decision).
 */
export const returnOwnerRow = (returnId: string, sql: Queryable): Fragment => sql`
  select ${returnColumns(sql)} from returns r where r.id = ${returnId}::uuid`

/** The return as its row gives it (to_jsonb: snake_case keys; bigints inside JSON are numbers). */
export function readReturnRow(row: Record<string, unknown>): ReturnRecord {
  return {
    id: String(row.id),
    orderId: String(row.order_id),
    customerId: String(row.customer_id),
    status: row.status as ReturnStatus,
    reason: String(row.reason),
    rejectionReason: (row.rejection_reason as string | null) ?? null,
    refundCents: Number(row.refund_cents),
    paymentId: (row.payment_id as string | null) ?? null,
    carrier: (row.carrier as string | null) ?? null,
    receivedBy: (row.received_by as string | null) ?? null,
    items: (row.items as ItemJson[]).map((item) => ({ ...item, priceCents: Number(item.priceCents) })),
    createdAt: new Date(String(row.created_at)),
    updatedAt: new Date(String(row.updated_at)),
  }
}

/** What a decision changed of the return. */
export const writeReturn = (returnId: string, change: ReturnChange, sql: Queryable): Fragment => sql`
  update returns set status = ${change.status}, rejection_reason = ${change.rejectionReason},
    payment_id = ${change.paymentId}, updated_at = now()
  where id = ${returnId}::uuid`

export function createReturnsRepository(db: Queryable) {
  return {
    /** Who reported the goods received: the first report's, kept (a repeated receipt moves nothing). */
    async recordReceipt(returnId: string, by: string, sql: Queryable = db): Promise<void> {
      await sql`update returns set received_by = coalesce(received_by, ${by}) where id = ${returnId}::uuid`
    },

    /** The return and its lines, in one statement. */
    async insert(created: NewReturn, sql: Queryable = db): Promise<ReturnRecord> {
      const [row] = await sql<ReturnRow[]>`
        with inserted as (
          insert into returns ${sql({
            id: created.id,
            order_id: created.orderId,
            customer_id: created.customerId,
            reason: created.reason,
            refund_cents: created.refundCents,
            carrier: created.carrier,
          })}
          returning *
        ),
        lines as (
          insert into return_items ${sql(
            created.items.map((item, index) => ({
              return_id: created.id,
              line: index + 1,
              product_id: item.productId,
              name: item.name,
              quantity: item.quantity,
              price_cents: item.priceCents,
            })),
          )}
        )
        select id, order_id, customer_id, status, reason, rejection_reason, refund_cents, payment_id, carrier,
          received_by, created_at, updated_at, '[]'::json as items
        from inserted`
      if (!row) throw new Error('the return was not inserted')
      return { ...fromRow(row), items: created.items }
    },

    async findById(id: string, sql: Queryable = db): Promise<ReturnRecord | undefined> {
      const [row] = await sql<ReturnRow[]>`select ${returnColumns(sql)} from returns r where r.id = ${id}`
      return row ? fromRow(row) : undefined
    },

    /** A page of the order's returns, newest first, and how many it has. */
    async listByOrder(
      orderId: string,
      { limit, offset }: { limit: number; offset: number },
      sql: Queryable = db,
    ): Promise<{ rows: ReturnRecord[]; total: number }> {
      const [rows, [count]] = await Promise.all([
        sql<ReturnRow[]>`
          select ${returnColumns(sql)} from returns r where r.order_id = ${orderId}
          order by r.created_at desc, r.id desc limit ${limit} offset ${offset}`,
        sql<{ total: string }[]>`select count(*) as total from returns where order_id = ${orderId}`,
      ])
      return { rows: rows.map(fromRow), total: Number(count?.total ?? 0) }
    },

    /**
     * How many of each product of the order went back already or are on their way: its returns not rejected and its
     * exchanges not failed (a line is returned or exchanged once).
     */
    async returnedQuantities(orderId: string, sql: Queryable = db): Promise<Map<string, number>> {
      const rows = await sql<{ productId: string; quantity: string | number }[]>`
        select product_id, sum(quantity) as quantity from (
          select i.product_id, i.quantity
          from returns r join return_items i on i.return_id = r.id
          where r.order_id = ${orderId} and r.status <> 'rejected'
          union all
          select (line ->> 'productId')::uuid, (line ->> 'quantity')::integer
          from exchanges x cross join jsonb_array_elements(x.items) as line
          where x.order_id = ${orderId} and x.status <> 'failed'
        ) as taken
        group by product_id`
      return new Map(rows.map((row) => [row.productId, Number(row.quantity)]))
    },
  }
}

export type ReturnsRepository = ReturnType<typeof createReturnsRepository>
