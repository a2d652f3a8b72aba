// Exchanges in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open transaction. Also
// the exchange as the owner of its process: the select its decisions lock, and the write of what a decision changed.
import type { ExchangeStatus, ShippingAddress } from '@meridian/contracts'
import type { Fragment, Queryable } from '@meridian/db'

export interface ExchangeItemRecord {
  productId: string
  name: string
  quantity: number
  /** the order's unit price of what goes back */
  priceCents: number
  replacementProductId: string
  replacementName: string
  /** the catalogue's unit price of the replacement when the exchange was asked */
  replacementPriceCents: number
}

export interface ExchangeRecord {
  id: string
  orderId: string
  customerId: string
  status: ExchangeStatus
  items: ExchangeItemRecord[]
  chargeCents: number
  refundCents: number
  /** what pays a price rise: the request's payment method, or the order's */
  paymentToken: string | null
  shippingAddress: ShippingAddress
  failureReason: string | null
  createdAt: Date
  updatedAt: Date
}

export type NewExchange = Omit<ExchangeRecord, 'status' | 'failureReason' | 'createdAt' | 'updatedAt'>

/** What a decision changes of an exchange. */
export type ExchangeChange = Pick<ExchangeRecord, 'status' | 'failureReason'>

const exchangeColumns = (sql: Queryable) => sql`
  x.id, x.order_id, x.customer_id, x.status, x.items, x.charge_cents, x.refund_cents, x.payment_token,
  x.shipping_address, x.failure_reason, x.created_at, x.updated_at`

/** The exchange as its row gives it, by to_jsonb (snake_case) or by postgres.js (camelCase, bigints as strings). */
export function readExchangeRow(row: Record<string, unknown>): ExchangeRecord {
  const field = (snake: string, camel: string) => (snake in row ? row[snake] : row[camel])
  const items = field('items', 'items') as ExchangeItemRecord[]
  return {
    id: String(row.id),
    orderId: String(field('order_id', 'orderId')),
    customerId: String(field('customer_id', 'customerId')),
    status: row.status as ExchangeStatus,
    items: items.map((item) => ({
      ...item,
      priceCents: Number(item.priceCents),
      replacementPriceCents: Number(item.replacementPriceCents),
    })),
    chargeCents: Number(field('charge_cents', 'chargeCents')),
    refundCents: Number(field('refund_cents', 'refundCents')),
    paymentToken: (field('payment_token', 'paymentToken') as string | null) ?? null,
    shippingAddress: field('shipping_address', 'shippingAddress') as ShippingAddress,
    failureReason: (field('failure_reason', 'failureReason') as string | null) ?? null,
    createdAt: new Date(String(field('created_at', 'createdAt'))),
    updatedAt: new Date(String(field('updated_at', 'updatedAt'))),
  }
}

/** A select of the exchange `exchangeId`: its process's owner row (the module locks it for a decision). */
export const exchangeOwnerRow = (exchangeId: string, sql: Queryable): Fragment => sql`
  select ${exchangeColumns(sql)} from exchanges x where x.id = ${exchangeId}::uuid`

/** What a decision changed of the exchange. */
export const writeExchange = (exchangeId: string, change: ExchangeChange, sql: Queryable): Fragment => sql`
  update exchanges set status = ${change.status}, failure_reason = ${change.failureReason}, updated_at = now()
  where id = ${exchangeId}::uuid`

export function createExchangesRepository(db: Queryable) {
  return {
    async insert(created: NewExchange, sql: Queryable = db): Promise<ExchangeRecord> {
      const [row] = await sql<Record<string, unknown>[]>`
        insert into exchanges ${sql({
          id: created.id,
          order_id: created.orderId,
          customer_id: created.customerId,
          items: sql.json(created.items as never),
          charge_cents: created.chargeCents,
          refund_cents: created.refundCents,
          payment_token: created.paymentToken,
          shipping_address: sql.json(created.shippingAddress as never),
        })}
        returning *`
      if (!row) throw new Error('the exchange was not inserted')
      return readExchangeRow(row)
    },

    async findById(id: string, sql: Queryable = db): Promise<ExchangeRecord | undefined> {
      const [row] = await sql<Record<string, unknown>[]>`
        select ${exchangeColumns(sql)} from exchanges x where x.id = ${id}`
      return row ? readExchangeRow(row) : undefined
    },

    /** The payment method the order was placed with (none: the order was paid another way). */
    async orderPaymentToken(orderId: string, sql: Queryable = db): Promise<string | null> {
      const [row] = await sql<{ paymentToken: string | null }[]>`
        select payment_token from orders where id = ${orderId}`
      return row?.paymentToken ?? null
    },

    /** The order's exchanges, newest first (at most 100: an order has few). */
    async listByOrder(orderId: string, sql: Queryable = db): Promise<ExchangeRecord[]> {
      const rows = await sql<Record<string, unknown>[]>`
        select ${exchangeColumns(sql)} from exchanges x where x.order_id = ${orderId}
        order by x.created_at desc, x.id desc limit 100`
      return rows.map(readExchangeRow)
    },
  }
}

export type ExchangesRepository = ReturnType<typeof createExchangesRepository>
