// Shipment use cases: creating a reserved order's shipment (on the saga's shipment.requested), reading one in its
// hypermedia form, listing, and delivering. Every state change and its event commit in one transaction (outbox).
import {
  AppError,
  type DeliveredShipment,
  type Shipment,
  type ShipmentItem,
  type ShipmentLinks,
  type ShipmentListQuery,
  type ShippingAddress,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Sql, type TransactionSql, transaction } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import { type AuditSource, appendAudit, type Principal } from '@meridian/service-kit'
import { shipmentList } from '../data/shipment-columns.ts'
import type { ShipmentRecord, ShipmentsRepository } from '../data/shipments-repository.ts'
import { isCustomerOrAdmin, isUuid, ownerFilterOf } from './access.ts'
import { carrierName, newTrackingNumber } from './tracking-numbers.ts'

/** The name shipping signs its events with (the envelope's source). */
export const serviceSource = 'shipping'

export const shipmentHref = (id: string) => `/api/v1/shipments/${id}`
export const orderHref = (orderId: string) => `/api/v1/orders/${orderId}`

/** `self` and `order`, and `deliver` while the shipment is on its way. */
export function shipmentLinks(record: Pick<ShipmentRecord, 'id' | 'orderId' | 'status'>): ShipmentLinks {
  const links: ShipmentLinks = {
    self: { href: shipmentHref(record.id), method: 'GET' },
    order: { href: orderHref(record.orderId), method: 'GET' },
  }
  if (record.status === 'created')
    links.deliver = { href: `${shipmentHref(record.id)}/deliver`, method: 'POST' }
  return links
}

/** What a shipment looks like to clients: ISO timestamps, no unknown customer or address, its links. */
export function presentShipment(record: ShipmentRecord): Shipment {
  return {
    id: record.id,
    orderId: record.orderId,
    ...(record.customerId !== null ? { customerId: record.customerId } : {}),
    status: record.status,
    carrier: record.carrier,
    trackingNumber: record.trackingNumber,
    ...(record.shippingAddress !== null ? { shippingAddress: record.shippingAddress } : {}),
    items: record.items,
    createdAt: record.createdAt.toISOString(),
    ...(record.deliveredAt !== null ? { deliveredAt: record.deliveredAt.toISOString() } : {}),
    _links: shipmentLinks(record),
  }
}

/** What the shipment step knows of a reserved order: shipment.requested's data, less its attempt and reservation. */
export interface OrderToShip {
  orderId: string
  customerId?: string | undefined
  shippingAddress?: ShippingAddress | undefined
  items: readonly ShipmentItem[]
}

export type ShipOutcome =
  | { outcome: 'created'; shipment: ShipmentRecord }
  /** the order has its shipment already: left as it is; `announced` when shipment.created was appended again */
  | { outcome: 'already created'; shipment: ShipmentRecord; announced: boolean }

/** An id the order service would never send is a bad event (retried, then dead-lettered), not a shipment. */
function assertShippable(order: OrderToShip): void {
  if (!isUuid(order.orderId)) throw new Error(`order id '${order.orderId}' is not a uuid`)
  if (order.customerId !== undefined && !isUuid(order.customerId)) {
    throw new Error(`customer id '${order.customerId}' of order ${order.orderId} is not a uuid`)
  }
}

export interface ShipmentUseCasesDependencies {
  shipments: ShipmentsRepository
  sql: Sql
}

export function createShipmentUseCases({ shipments, sql }: ShipmentUseCasesDependencies) {
  /** Appends shipment.created for the shipment, keyed by its order (the saga's aggregate). */
  async function announceCreated(shipment: ShipmentRecord, tx: TransactionSql): Promise<void> {
    const created = createEvent(
      'shipment.created',
      {
        orderId: shipment.orderId,
        shipmentId: shipment.id,
        carrier: shipment.carrier,
        trackingNumber: shipment.trackingNumber,
      },
      { source: serviceSource },
    )
    await appendToOutbox(tx, created, { aggregateId: shipment.orderId })
  }

  return {
    /**
     * Creates the reserved order's shipment with the carrier and a new tracking number, and appends shipment.created,
     * in the caller's transaction (a consumer's, which also records the event in the inbox). An order that has its
     * shipment already keeps it; with `announceExisting` (the saga asking again: it did not hear the answer),
     * shipment.created is appended again for it, with the same shipment id and tracking number.
     */
    async createOrderShipment(
      order: OrderToShip,
      tx: TransactionSql,
      { announceExisting = false }: { announceExisting?: boolean } = {},
    ): Promise<ShipOutcome> {
      assertShippable(order)
      const address = order.shippingAddress
      const inserted = await shipments.insertForOrder(
        {
          orderId: order.orderId,
          customerId: order.customerId ?? null,
          carrier: carrierName,
          trackingNumber: newTrackingNumber(),
          shippingAddress: address ? { street: address.street, city: address.city, zip: address.zip } : null,
          items: order.items.map((item) => ({ productId: item.productId, quantity: item.quantity })),
        },
        tx,
      )
      if (inserted) {
        await announceCreated(inserted, tx)
        return { outcome: 'created', shipment: inserted }
      }
      // locked: a delivery of the same shipment commits before or after this, never between read and append
      const existing = await shipments.findByOrder(order.orderId, tx, { lock: true })
      if (!existing) throw new Error(`order ${order.orderId} has a shipment that cannot be read`)
      if (announceExisting) await announceCreated(existing, tx)
      return { outcome: 'already created', shipment: existing, announced: announceExisting }
    },

    /** The shipment, if the principal may see it; another customer's is a 404 (its existence is not told). */
    async getShipment(id: string, principal: Principal): Promise<Shipment> {
      const shipment = await shipments.findById(id)
      if (!shipment || !isCustomerOrAdmin(principal, shipment.customerId)) {
        throw AppError.notFound(`Shipment ${id} not found`)
      }
      return presentShipment(shipment)
    },

    /**
     * A page of shipments as the list envelope: every shipment for an admin, only the caller's own for anyone else
     * (whatever the filters say). The links keep the path the client used.
     */
    async listShipments(
      query: ShipmentListQuery,
      principal: Principal,
      path: string,
    ): Promise<ListEnvelope<Shipment>> {
      const owner = ownerFilterOf(principal)
      const request = shipmentList.parse({ ...query, customerId: owner ?? undefined })
      // a caller who owns no shipments (a client) sees an empty list
      const { rows, total } = owner === null ? { rows: [], total: 0 } : await shipments.list(request)
      return listEnvelope(path, query, request, rows.map(presentShipment), total)
    },

    /**
     * Marks the shipment delivered and appends shipment.delivered, in one transaction on its locked row. Delivering a
     * delivered shipment answers it as it is, without a second event. Who may deliver (admins, carriers) is the
     * route's to check.
     */
    async deliverShipment(id: string, audit: AuditSource): Promise<DeliveredShipment> {
      const delivered = await transaction(sql, async (tx) => {
        const shipment = await shipments.lockById(id, tx)
        if (!shipment) throw AppError.notFound(`Shipment ${id} not found`)
        if (shipment.status === 'delivered') return shipment
        const updated = await shipments.markDelivered(id, tx)
        if (!updated?.deliveredAt) throw new Error(`shipment ${id} was locked but not delivered`)
        const event = createEvent(
          'shipment.delivered',
          {
            orderId: updated.orderId,
            shipmentId: updated.id,
            deliveredAt: updated.deliveredAt.toISOString(),
          },
          { source: serviceSource },
        )
        await appendToOutbox(tx, event, { aggregateId: updated.orderId })
        await appendAudit(tx, audit, {
          action: 'shipment.delivered',
          target: `shipment:${updated.id}`,
          detail: { orderId: updated.orderId },
        })
        return updated
      })
      return presentShipment(delivered) as DeliveredShipment
    },
  }
}

export type ShipmentUseCases = ReturnType<typeof createShipmentUseCases>
