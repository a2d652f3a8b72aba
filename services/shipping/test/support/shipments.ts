// Data factories of the shipping tests: shipments created through the use case (as the consumers create them), and
// the outbox rows of an order.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import type { ShipmentRecord } from '../../src/data/shipments-repository.ts'
import type { OrderToShip } from '../../src/domain/shipments.ts'
import type { ShippingTestApp } from './app.ts'

export const testAddress = { street: '1 Main Street', city: 'Springfield', zip: '12345' }

/** A reserved order as shipment.requested describes it: the customer's, with an address and one line. */
export const reservedOrder = (overrides: Partial<OrderToShip> = {}): OrderToShip => ({
  orderId: randomUUID(),
  customerId: randomUUID(),
  shippingAddress: testAddress,
  items: [{ productId: randomUUID(), quantity: 2 }],
  ...overrides,
})

/** The order's shipment, created as the shipment.requested consumer creates it (with its shipment.created). */
export async function createTestShipment(
  shipping: ShippingTestApp,
  overrides: Partial<OrderToShip> = {},
): Promise<ShipmentRecord> {
  const order = reservedOrder(overrides)
  const { shipment } = await transaction(shipping.sql, (tx) =>
    shipping.shipments.createOrderShipment(order, tx),
  )
  return shipment
}

export interface OutboxRow {
  eventType: string
  aggregateId: string
  payload: { id: string; type: string; source: string; data: Record<string, unknown> }
}

/** The outbox rows of an order (aggregate), oldest first. */
export function outboxOf(shipping: ShippingTestApp, orderId: string): Promise<OutboxRow[]> {
  return shipping.sql<OutboxRow[]>`
    select event_type, aggregate_id, payload from outbox where aggregate_id = ${orderId} order by id`
}

export async function shipmentsOfOrder(shipping: ShippingTestApp, orderId: string) {
  return shipping.sql<{ id: string; status: string }[]>`
    select id, status from shipments where order_id = ${orderId}`
}
