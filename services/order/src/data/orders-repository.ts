// Orders and their items in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open
// transaction.
import type { OrderStatus, ShippingAddress } from '@meridian/contracts'
import { isUniqueViolation, type ListInput, type ListResult, type Queryable } from '@meridian/db'
import { type OrderListFilter, type OrderListRequest, orderList } from './order-columns.ts'

export type { OrderListRequest }

export interface OrderItemRecord {
  productId: string
  name: string
  quantity: number
  /** exact money: integer minor units */
  priceCents: number
}

export interface OrderRecord {
  id: string
  customerId: string
  status: OrderStatus
  /** exact money: integer minor units */
  totalCents: number
  shippingAddress: ShippingAddress
  createdAt: Date
  updatedAt: Date
  items: OrderItemRecord[]
  /** the payment that paid it (payment.processed), as its saga recorded it; null until then */
  paymentId: string | null
  /** its shipment (shipment.created), as its saga recorded it; null until then */
  shipmentId: string | null
  /** the provider's 3-D Secure page while its payment waits for the customer (payment.action_required) */
  authenticateUrl: string | null
}

export interface NewOrder {
  /** chosen by the caller, so the order's saga and events can be written beside it in the same round trip */
  id: string
  customerId: string
  status: OrderStatus
  totalCents: number
  shippingAddress: ShippingAddress
  /** the payment provider's token, never card data */
  paymentToken: string | null
  items: readonly OrderItemRecord[]
  /** the Idempotency-Key it was placed with, and its request's fingerprint; none without the header */
  idempotency?: OrderIdempotency
}

export interface OrderIdempotency {
  key: string
  requestHash: string
}

/** What a retry under an Idempotency-Key finds of the order placed with it: enough to answer it again. */
export interface KeyedOrder {
  id: string
  totalCents: number
  requestHash: string
}

const keyedOrderIndex = 'orders_customer_idempotency_key_idx'

/** True when an insert failed because the customer's Idempotency-Key already placed an order (another request). */
export const isIdempotencyKeyTaken = (error: unknown): boolean => isUniqueViolation(error, keyedOrderIndex)

/**
 * What the saga's step requests carry of an order (never card data: the provider's token at most): what was placed,
 * its items in line order.
 */
export interface OrderContent extends Omit<NewOrder, 'items' | 'idempotency'> {
  items: OrderItemRecord[]
}

/** What a state change reads of the order it locked. */
export interface LockedOrder {
  id: string
  customerId: string
  status: OrderStatus
}

// bigint columns come back as text from postgres.js: read back as numbers (at most 10^10 cents, exact)
type OrderRow = Omit<OrderRecord, 'totalCents' | 'items' | 'paymentId' | 'shipmentId' | 'authenticateUrl'> & {
  totalCents: string | number
}
type StepIds = Pick<OrderRecord, 'paymentId' | 'shipmentId' | 'authenticateUrl'>
type ItemRow = Omit<OrderItemRecord, 'priceCents'> & { orderId: string; priceCents: string | number }

const orderColumns = [
  'id',
  'customer_id',
  'status',
  'total_cents',
  'shipping_address',
  'created_at',
  'updated_at',
]

/** An item as itemsJson gives it: a bigint inside JSON is a number. */
export type ItemJson = Omit<OrderItemRecord, 'priceCents'> & { priceCents: string | number }

export const fromItemJson = (item: ItemJson): OrderItemRecord => ({
  ...item,
  priceCents: Number(item.priceCents),
})

/**
 * The items of the order aliased `o` in the query it is part of, as a JSON array in line order: a scalar subquery,
 * so an order and its items are one statement.
 */
export const itemsJson = (sql: Queryable) => sql`(
  select coalesce(json_agg(json_build_object(
           'productId', i.product_id, 'name', i.name, 'quantity', i.quantity, 'priceCents', i.price_cents)
         order by i.line), '[]'::json)
  from order_items i where i.order_id = o.id)`

const toItem = ({ orderId: _orderId, ...row }: ItemRow): OrderItemRecord => ({
  ...row,
  priceCents: Number(row.priceCents),
})

export function createOrdersRepository(db: Queryable) {
  async function itemsOf(
    orderIds: readonly string[],
    sql: Queryable,
  ): Promise<Map<string, OrderItemRecord[]>> {
    const byOrder = new Map<string, OrderItemRecord[]>(orderIds.map((id) => [id, []]))
    if (orderIds.length === 0) return byOrder
    const rows = await sql<ItemRow[]>`
      select order_id, product_id, name, quantity, price_cents from order_items
      where order_id = any(${sql.array([...orderIds])}::uuid[])
      order by order_id, line`
    for (const row of rows) byOrder.get(row.orderId)?.push(toItem(row))
    return byOrder
  }

  /** The payment and shipment ids the orders' sagas recorded (the order's links). */
  async function stepIdsOf(orderIds: readonly string[], sql: Queryable): Promise<Map<string, StepIds>> {
    if (orderIds.length === 0) return new Map()
    const rows = await sql<(StepIds & { orderId: string })[]>`
      select order_id, payment_id, shipment_id, authenticate_url from sagas
      where order_id = any(${sql.array([...orderIds])}::uuid[])`
    return new Map(rows.map(({ orderId, ...ids }) => [orderId, ids]))
  }

  const noStepIds: StepIds = { paymentId: null, shipmentId: null, authenticateUrl: null }

  return {
    /** Inserts the order and its items (lines numbered in the order given), in one statement. */
    async insert(order: NewOrder, sql: Queryable = db): Promise<OrderRecord> {
      const [row] = await sql<OrderRow[]>`
        with inserted as (
          insert into orders ${sql({
            id: order.id,
            customer_id: order.customerId,
            status: order.status,
            total_cents: order.totalCents,
            shipping_address: sql.json(order.shippingAddress),
            payment_token: order.paymentToken,
            idempotency_key: order.idempotency?.key ?? null,
            request_hash: order.idempotency?.requestHash ?? null,
          })}
          returning ${sql(orderColumns)}
        ),
        items as (
          insert into order_items (order_id, line, product_id, name, quantity, price_cents)
          select ${order.id}::uuid, item.line - 1, item.product_id, item.name, item.quantity, item.price_cents
          from unnest(
            ${sql.array(order.items.map((item) => item.productId))}::uuid[],
            ${sql.array(order.items.map((item) => item.name))}::text[],
            ${sql.array(order.items.map((item) => item.quantity))}::int[],
            ${sql.array(order.items.map((item) => item.priceCents))}::bigint[]
          ) with ordinality as item(product_id, name, quantity, price_cents, line)
        )
        select * from inserted`
      if (!row) throw new Error('insert into orders returned no row')
      return {
        ...row,
        totalCents: Number(row.totalCents),
        items: order.items.map((item) => ({ ...item })),
        ...noStepIds,
      }
    },

    /** The order with its items and the ids its saga recorded, in one statement. */
    async findById(id: string, sql: Queryable = db): Promise<OrderRecord | undefined> {
      const [row] = await sql<(OrderRow & StepIds & { items: ItemJson[] })[]>`
        select o.id, o.customer_id, o.status, o.total_cents, o.shipping_address, o.created_at, o.updated_at,
          s.payment_id, s.shipment_id, s.authenticate_url, ${itemsJson(sql)} as items
        from orders o left join sagas s on s.order_id = o.id
        where o.id = ${id}`
      if (!row) return undefined
      return { ...row, totalCents: Number(row.totalCents), items: row.items.map(fromItemJson) }
    },

    /** The order `customerId` placed with the Idempotency-Key `key`, if any. */
    async findByIdempotencyKey(
      customerId: string,
      key: string,
      sql: Queryable = db,
    ): Promise<KeyedOrder | undefined> {
      const [row] = await sql<(Omit<KeyedOrder, 'totalCents'> & { totalCents: string | number })[]>`
        select id, total_cents, request_hash from orders
        where customer_id = ${customerId} and idempotency_key = ${key}`
      return row ? { ...row, totalCents: Number(row.totalCents) } : undefined
    },

    /** The statuses of the orders named (those that exist). */
    async statusesOf(ids: readonly string[], sql: Queryable = db): Promise<Map<string, OrderStatus>> {
      if (ids.length === 0) return new Map()
      const rows = await sql<{ id: string; status: OrderStatus }[]>`
        select id, status from orders where id = any(${sql.array([...ids])}::uuid[])`
      return new Map(rows.map((row) => [row.id, row.status]))
    },

    /** Locks the order's row for a state change; undefined when there is none. */
    async lockById(id: string, sql: Queryable = db): Promise<LockedOrder | undefined> {
      const [row] = await sql<LockedOrder[]>`
        select id, customer_id, status from orders where id = ${id} for update`
      return row
    },

    /** A list query checked against the list's allow-lists (422 VALIDATION_ERROR outside them), for `list`. */
    listRequest: (query: ListInput<OrderListFilter>): OrderListRequest => orderList.parse(query),

    /** A page of orders (the request's customer and status) with their items, and the total matching it. */
    async list(request: OrderListRequest, sql: Queryable = db): Promise<ListResult<OrderRecord>> {
      const { rows, total } = await orderList.run<{
        id: string
        customerId: string
        status: OrderStatus
        total: string | number
        shippingAddress: ShippingAddress
        createdAt: Date
        updatedAt: Date
      }>(sql, request)
      const ids = rows.map((row) => row.id)
      const [items, stepIds] = await Promise.all([itemsOf(ids, sql), stepIdsOf(ids, sql)])
      return {
        total,
        rows: rows.map((row) => ({
          id: row.id,
          customerId: row.customerId as string,
          status: row.status as OrderStatus,
          totalCents: Number(row.total),
          shippingAddress: row.shippingAddress as ShippingAddress,
          createdAt: row.createdAt as Date,
          updatedAt: row.updatedAt as Date,
          items: items.get(row.id) ?? [],
          ...(stepIds.get(row.id) ?? noStepIds),
        })),
      }
    },
  }
}

export type OrdersRepository = ReturnType<typeof createOrdersRepository>
