// The shipments table's columns by API field, and its list (sort, filters): data-layer facts that the repository
// builds SQL from and the list query's parsing checks requests against.
import { defineList, type ListRequestOf } from '@meridian/db'

/** API field -> column. The only names that ever reach SQL as identifiers. */
export const shipmentColumns = {
  id: 'id',
  orderId: 'order_id',
  customerId: 'customer_id',
  status: 'status',
  carrier: 'carrier',
  trackingNumber: 'tracking_number',
  shippingAddress: 'shipping_address',
  items: 'items',
  createdAt: 'created_at',
  deliveredAt: 'delivered_at',
} as const

/** Every field of the record: the list has no sparse fieldset. */
const shipmentFields = [
  'id',
  'orderId',
  'customerId',
  'status',
  'carrier',
  'trackingNumber',
  'shippingAddress',
  'items',
  'createdAt',
  'deliveredAt',
] as const

/**
 * GET /shipments: newest first, the orderId and status filters of the query, and customerId, which the use case sets
 * for a non-admin (never the client: the query schema has no such parameter).
 */
export const shipmentList = defineList({
  table: 'shipments',
  columns: shipmentColumns,
  selectable: shipmentFields,
  sortable: ['createdAt', 'deliveredAt'],
  filterable: ['orderId', 'customerId', 'status'],
  defaultSort: 'createdAt:desc',
  // no sparse fieldset: every field of the record, always
  alwaysSelected: shipmentFields,
})

export type ShipmentListRequest = ListRequestOf<typeof shipmentList>
