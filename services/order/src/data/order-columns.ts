// The orders table's columns by API field, and the list of a customer's orders: data-layer facts that the repository
// builds SQL from and the list query's parsing checks requests against. The rule for list definitions: they live in
// data/ (a definition carries its table, columns and SQL), and the domain reaches one only through its repository
// (`listRequest` parses a query, `list` runs it), so domain/ never imports a value from data/.
import { defineList, type ListRequestOf } from '@meridian/db'

/** API field -> column. The only names that ever reach SQL as identifiers. */
export const orderColumns = {
  id: 'id',
  customerId: 'customer_id',
  status: 'status',
  // selected `as "total"`: the list row carries integer cents under the API's name
  total: 'total_cents',
  shippingAddress: 'shipping_address',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const

/** GET /users/{userId}/orders: one customer's orders (customerId set from the path), sort and status filter. */
export const orderList = defineList({
  table: 'orders',
  columns: orderColumns,
  selectable: ['id', 'customerId', 'status', 'total', 'shippingAddress', 'createdAt', 'updatedAt'],
  sortable: ['createdAt', 'total'],
  filterable: ['customerId', 'status'],
  defaultSort: 'createdAt:desc',
  alwaysSelected: ['id'],
})

export type OrderListRequest = ListRequestOf<typeof orderList>
export type OrderListFilter = 'customerId' | 'status'
