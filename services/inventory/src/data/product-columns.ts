// The products table's columns by API field, and its list (sort, fields, filters, search): data-layer facts that the
// repository builds SQL from and the list query's parsing checks requests against.
import { type ProductField, productFields, productSortFields } from '@meridian/contracts'
import { defineList, type ListRequestOf } from '@meridian/db'

/** API field -> column. The only names that ever reach SQL as identifiers. */
export const productColumns: Record<ProductField, string> = {
  id: 'id',
  sku: 'sku',
  name: 'name',
  description: 'description',
  // selected `as "price"`: the list row carries integer cents under the API's name
  price: 'price_cents',
  available: 'available',
  reserved: 'reserved',
  active: 'active',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
}

/**
 * GET /products: the allow-lists of contracts (sort, fields), `active` and `sku` filters, and `q` over the stored
 * `search` vector (name, sku and description, 'simple' configuration). Newest first, id breaking ties.
 */
export const productList = defineList({
  table: 'products',
  columns: productColumns,
  selectable: productFields,
  sortable: productSortFields,
  filterable: ['active', 'sku'],
  search: { vector: 'search', config: 'simple' },
  defaultSort: 'createdAt:desc',
  alwaysSelected: ['id'],
})

export type ProductListRequest = ListRequestOf<typeof productList>
