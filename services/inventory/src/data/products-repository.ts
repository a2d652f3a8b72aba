// Products and their stock in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open
// transaction.
import type { ListResult, Queryable } from '@meridian/db'
import { type ProductListRequest, productList } from './product-columns.ts'

export type { ProductListRequest }

export interface ProductRecord {
  id: string
  sku: string
  name: string
  description: string | null
  /** exact money: integer minor units */
  priceCents: number
  available: number
  reserved: number
  active: boolean
  version: number
  createdAt: Date
  updatedAt: Date
}

/** A row of a sparse list: the id, and whichever other fields were selected. */
export type ProductListRecord = Pick<ProductRecord, 'id'> & Partial<ProductRecord>

export interface NewProduct {
  sku: string
  name: string
  description: string | null
  priceCents: number
  available: number
  active: boolean
}

export interface ProductChanges {
  name?: string
  description?: string | null
  priceCents?: number
  active?: boolean
}

/** One row of the stock_movements audit: a product's stock change and why. */
export interface StockMovement {
  productId: string
  deltaAvailable: number
  deltaReserved: number
  reason: string
  orderId?: string
}

const changeColumns: Record<keyof ProductChanges, string> = {
  name: 'name',
  description: 'description',
  priceCents: 'price_cents',
  active: 'active',
}

// price_cents is a bigint, which postgres.js returns as text: read back as a number (at most 10^10, exact)
const columns = [
  'id',
  'sku',
  'name',
  'description',
  'price_cents',
  'available',
  'reserved',
  'active',
  'version',
  'created_at',
  'updated_at',
]
type ProductRow = Omit<ProductRecord, 'priceCents'> & { priceCents: string | number }
const toRecord = (row: ProductRow): ProductRecord => ({ ...row, priceCents: Number(row.priceCents) })

export function createProductsRepository(db: Queryable) {
  return {
    async insert(product: NewProduct, sql: Queryable = db): Promise<ProductRecord> {
      const [row] = await sql<ProductRow[]>`
        insert into products ${sql({
          sku: product.sku,
          name: product.name,
          description: product.description,
          price_cents: product.priceCents,
          available: product.available,
          active: product.active,
        })}
        returning ${sql(columns)}`
      if (!row) throw new Error('insert into products returned no row')
      return toRecord(row)
    },

    async findById(id: string, sql: Queryable = db): Promise<ProductRecord | undefined> {
      const [row] = await sql<ProductRow[]>`select ${sql(columns)} from products where id = ${id}`
      return row && toRecord(row)
    },

    /** The products among `ids` that exist (any order). */
    async findByIds(ids: readonly string[], sql: Queryable = db): Promise<ProductRecord[]> {
      const rows = await sql<ProductRow[]>`
        select ${sql(columns)} from products where id = any(${sql.array([...ids])}::uuid[])`
      return rows.map(toRecord)
    },

    /** A page of the products list (sparse: only the request's fields) and the total matching it. */
    async list(request: ProductListRequest, sql: Queryable = db): Promise<ListResult<ProductListRecord>> {
      const { rows, total } = await productList.run<{ price: string }>(sql, request)
      return {
        total,
        rows: rows.map(({ price, ...row }) => {
          const record = row as unknown as ProductListRecord
          return price === undefined ? record : { ...record, priceCents: Number(price) }
        }),
      }
    },

    /** Applies the changes; with `expectedVersion` only if the row still has it. Undefined when no row matched. */
    async update(
      id: string,
      changes: ProductChanges,
      expectedVersion: number | undefined,
      sql: Queryable = db,
    ): Promise<ProductRecord | undefined> {
      const set: Record<string, unknown> = {}
      for (const [field, value] of Object.entries(changes)) {
        if (value !== undefined) set[changeColumns[field as keyof ProductChanges]] = value
      }
      const [row] = await sql<ProductRow[]>`
        update products set ${sql(set)}, version = version + 1, updated_at = now()
        where id = ${id} ${expectedVersion === undefined ? sql`` : sql`and version = ${expectedVersion}`}
        returning ${sql(columns)}`
      return row && toRecord(row)
    },

    /**
     * Adds `delta` to the available units, only if they stay at zero or more (reserved units are not touched).
     * Undefined when the product does not exist or the change would take it below zero.
     */
    async adjustAvailable(
      id: string,
      delta: number,
      sql: Queryable = db,
    ): Promise<ProductRecord | undefined> {
      const [row] = await sql<ProductRow[]>`
        update products
        set available = available + ${delta}, version = version + 1, updated_at = now()
        where id = ${id} and available + ${delta} >= 0
        returning ${sql(columns)}`
      return row && toRecord(row)
    },

    /** Appends rows to the stock_movements audit, in one statement. */
    async recordMovements(movements: readonly StockMovement[], sql: Queryable = db): Promise<void> {
      if (movements.length === 0) return
      await sql`
        insert into stock_movements (product_id, delta_available, delta_reserved, reason, order_id)
        select * from unnest(
          ${sql.array(movements.map((movement) => movement.productId))}::uuid[],
          ${sql.array(movements.map((movement) => movement.deltaAvailable))}::int[],
          ${sql.array(movements.map((movement) => movement.deltaReserved))}::int[],
          ${sql.array(movements.map((movement) => movement.reason))}::text[],
          ${sql.array(movements.map((movement) => movement.orderId ?? null))}::uuid[]
        )`
    },
  }
}

export type ProductsRepository = ReturnType<typeof createProductsRepository>
