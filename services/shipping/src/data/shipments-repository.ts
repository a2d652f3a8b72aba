// Shipments in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open transaction.
import type { ShipmentItem, ShipmentStatus, ShippingAddress } from '@meridian/contracts'
import type { ListResult, Queryable } from '@meridian/db'
import { type ShipmentListRequest, shipmentList } from './shipment-columns.ts'

export type { ShipmentListRequest }

export interface ShipmentRecord {
  id: string
  orderId: string
  customerId: string | null
  status: ShipmentStatus
  carrier: string
  trackingNumber: string
  shippingAddress: ShippingAddress | null
  items: ShipmentItem[]
  createdAt: Date
  deliveredAt: Date | null
}

export interface NewShipment {
  orderId: string
  customerId: string | null
  carrier: string
  trackingNumber: string
  shippingAddress: ShippingAddress | null
  items: readonly ShipmentItem[]
}

const columns = [
  'id',
  'order_id',
  'customer_id',
  'status',
  'carrier',
  'tracking_number',
  'shipping_address',
  'items',
  'created_at',
  'delivered_at',
]

export function createShipmentsRepository(db: Queryable) {
  return {
    /**
     * The order's shipment; undefined when the order has one already (order_id is unique: a concurrent insert for the
     * same order waits for the first to commit, then finds it taken).
     */
    async insertForOrder(shipment: NewShipment, sql: Queryable = db): Promise<ShipmentRecord | undefined> {
      const [row] = await sql<ShipmentRecord[]>`
        insert into shipments ${sql({
          order_id: shipment.orderId,
          customer_id: shipment.customerId,
          carrier: shipment.carrier,
          tracking_number: shipment.trackingNumber,
          shipping_address: shipment.shippingAddress === null ? null : sql.json(shipment.shippingAddress),
          items: sql.json(shipment.items.map((item) => ({ ...item }))),
        })}
        on conflict (order_id) do nothing
        returning ${sql(columns)}`
      return row
    },

    async findById(id: string, sql: Queryable = db): Promise<ShipmentRecord | undefined> {
      const [row] = await sql<ShipmentRecord[]>`select ${sql(columns)} from shipments where id = ${id}`
      return row
    },

    /** The order's shipment; with `lock`, its row is locked for update (a delivery and a re-announcement queue). */
    async findByOrder(
      orderId: string,
      sql: Queryable = db,
      { lock = false }: { lock?: boolean } = {},
    ): Promise<ShipmentRecord | undefined> {
      const [row] = await sql<ShipmentRecord[]>`
        select ${sql(columns)} from shipments where order_id = ${orderId} ${lock ? sql`for update` : sql``}`
      return row
    },

    /** Locks the shipment's row for a state change and reads it; undefined when there is none. */
    async lockById(id: string, sql: Queryable = db): Promise<ShipmentRecord | undefined> {
      const [row] = await sql<ShipmentRecord[]>`
        select ${sql(columns)} from shipments where id = ${id} for update`
      return row
    },

    /** Marks a created shipment delivered now; undefined when it was not `created`. */
    async markDelivered(id: string, sql: Queryable = db): Promise<ShipmentRecord | undefined> {
      const [row] = await sql<ShipmentRecord[]>`
        update shipments set status = 'delivered', delivered_at = now(), version = version + 1
        where id = ${id} and status = 'created'
        returning ${sql(columns)}`
      return row
    },

    /** A page of shipments (the request's filters and order) and the total matching it. */
    async list(request: ShipmentListRequest, sql: Queryable = db): Promise<ListResult<ShipmentRecord>> {
      return shipmentList.run<ShipmentRecord>(sql, request)
    },
  }
}

export type ShipmentsRepository = ReturnType<typeof createShipmentsRepository>
