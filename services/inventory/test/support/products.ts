// Data factories of the inventory tests: products written through the use case, with unique skus.
import { randomUUID } from 'node:crypto'
import type { CreateProductBody } from '@meridian/contracts'
import type { ProductRecord } from '../../src/data/products-repository.ts'
import type { InventoryTestApp } from './app.ts'

export const uniqueSku = (prefix = 'SKU'): string => `${prefix}-${randomUUID().slice(0, 13)}`

export async function createTestProduct(
  inventory: InventoryTestApp,
  overrides: Partial<CreateProductBody> = {},
): Promise<ProductRecord> {
  const { product } = await inventory.products.createProduct(
    {
      sku: uniqueSku(),
      name: 'Test product',
      price: 9.99,
      stock: 10,
      ...overrides,
    },
    // what a route would pass: the admin who made it, for the audit trail
    { actor: 'user:test-admin' },
  )
  return product
}

export interface StockRow {
  available: number
  reserved: number
}

export async function stockOf(inventory: InventoryTestApp, productId: string): Promise<StockRow> {
  const [row] = await inventory.sql<StockRow[]>`
    select available, reserved from products where id = ${productId}`
  if (!row) throw new Error(`no product ${productId}`)
  return row
}

export interface OutboxRow {
  eventType: string
  aggregateId: string
  payload: { id: string; type: string; source: string; data: Record<string, unknown> }
}

/** The outbox rows of an order (aggregate), oldest first. */
export function outboxOf(inventory: InventoryTestApp, orderId: string): Promise<OutboxRow[]> {
  return inventory.sql<OutboxRow[]>`
    select event_type, aggregate_id, payload from outbox where aggregate_id = ${orderId} order by id`
}
