// Product use cases: what creating, reading, listing, changing a product and adjusting its stock means, whoever
// calls it. Prices are exact: the API's amounts become integer cents here (422 naming the field otherwise).
import {
  AppError,
  type CreateProductBody,
  fromMinorUnits,
  type Product,
  type ProductListQuery,
  type ProductSummary,
  requireMinorUnits,
  type StockAdjustmentBody,
  type UpdateProductBody,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Sql, transaction } from '@meridian/db'
import { type AuditSource, appendAudit } from '@meridian/service-kit'
import { productList } from '../data/product-columns.ts'
import type {
  ProductChanges,
  ProductListRecord,
  ProductRecord,
  ProductsRepository,
} from '../data/products-repository.ts'
import { assertIfMatch, isConditional, productETag } from './product-version.ts'

/**
 * What a product looks like to clients: price in major units, no internal version, ISO timestamps, no description
 * when it has none. A list row holds only the columns its sparse fieldset selected, and only those fields appear.
 */
export function presentProduct(record: Partial<ProductRecord>): Partial<Product> {
  const product: Partial<Product> = {}
  if (record.id !== undefined) product.id = record.id
  if (record.sku !== undefined) product.sku = record.sku
  if (record.name !== undefined) product.name = record.name
  if (record.description !== undefined && record.description !== null)
    product.description = record.description
  if (record.priceCents !== undefined) product.price = fromMinorUnits(record.priceCents)
  if (record.available !== undefined) product.available = record.available
  if (record.reserved !== undefined) product.reserved = record.reserved
  if (record.active !== undefined) product.active = record.active
  if (record.createdAt !== undefined) product.createdAt = record.createdAt.toISOString()
  if (record.updatedAt !== undefined) product.updatedAt = record.updatedAt.toISOString()
  return product
}

/** A description as stored: trimmed, and none rather than an empty one. */
const storedDescription = (description: string | null | undefined): string | null => {
  const trimmed = description?.trim()
  return trimmed ? trimmed : null
}

const stockReasonMaximum = 300

export function createProductUseCases(products: ProductsRepository, sql: Sql) {
  async function getProduct(id: string): Promise<{ product: ProductRecord; etag: string }> {
    const product = await products.findById(id)
    if (!product) throw AppError.notFound(`Product ${id} not found`)
    return { product, etag: productETag(product.id, product.version) }
  }

  return {
    getProduct,

    /** Creates the product with its initial stock (recorded as the first stock movement). 409 on a taken sku. */
    async createProduct(
      input: CreateProductBody,
      audit: AuditSource,
    ): Promise<{ product: ProductRecord; etag: string }> {
      const priceCents = requireMinorUnits(input.price, 'price')
      const product = await transaction(sql, async (tx) => {
        const created = await products.insert(
          {
            sku: input.sku,
            name: input.name.trim(),
            description: storedDescription(input.description),
            priceCents,
            available: input.stock,
            active: input.active ?? true,
          },
          tx,
        )
        if (input.stock > 0) {
          await products.recordMovements(
            [
              {
                productId: created.id,
                deltaAvailable: input.stock,
                deltaReserved: 0,
                reason: 'initial stock',
              },
            ],
            tx,
          )
        }
        await appendAudit(tx, audit, {
          action: 'product.created',
          target: `product:${created.id}`,
          detail: { sku: created.sku, priceCents, stock: input.stock, active: created.active },
        })
        return created
      })
      return { product, etag: productETag(product.id, product.version) }
    },

    /**
     * A page of products as the list envelope; sort and fields outside the allow-lists are a 422, never SQL. `path`
     * is the one the client used, which the links keep with every other query parameter.
     */
    async listProducts(query: ProductListQuery, path: string): Promise<ListEnvelope<Partial<Product>>> {
      const request = productList.parse(query)
      const { rows, total } = await products.list(request)
      return listEnvelope(
        path,
        query,
        request,
        rows.map((row: ProductListRecord) => presentProduct(row)),
        total,
      )
    },

    /** Applies a partial change; with If-Match, only to the version the client read (else 412). */
    async changeProduct(
      id: string,
      changes: UpdateProductBody,
      ifMatch: string | undefined,
      audit: AuditSource,
    ): Promise<{ product: ProductRecord; etag: string }> {
      const stored: ProductChanges = {}
      if (changes.price !== undefined) stored.priceCents = requireMinorUnits(changes.price, 'price')
      if (changes.name !== undefined) stored.name = changes.name.trim()
      if (changes.description !== undefined) stored.description = storedDescription(changes.description)
      if (changes.active !== undefined) stored.active = changes.active

      let expectedVersion: number | undefined
      if (isConditional(ifMatch)) {
        const { product, etag } = await getProduct(id)
        assertIfMatch(ifMatch, etag)
        expectedVersion = product.version
      }
      const updated = await transaction(sql, async (tx) => {
        const changed = await products.update(id, stored, expectedVersion, tx)
        if (changed) {
          await appendAudit(tx, audit, {
            action: 'product.changed',
            target: `product:${id}`,
            detail: { fields: Object.keys(changes).sort(), ...stored },
          })
        }
        return changed
      })
      if (updated) return { product: updated, etag: productETag(updated.id, updated.version) }
      // nothing matched: the product is gone (404), or another write got in between the check and the update (412)
      await getProduct(id)
      throw AppError.preconditionFailed('The product was changed since you read it')
    },

    /**
     * Adds units to (or takes them from) what is available, recorded in the stock movements. Reserved units are
     * never touched: taking more than is available is a 409, whatever is reserved.
     */
    async adjustStock(
      id: string,
      { delta, reason }: StockAdjustmentBody,
      audit: AuditSource,
    ): Promise<{ product: ProductRecord; etag: string }> {
      if (delta === 0) {
        throw AppError.validation([{ field: 'delta', message: 'must not be 0', received: '0' }])
      }
      const product = await transaction(sql, async (tx) => {
        const adjusted = await products.adjustAvailable(id, delta, tx)
        if (!adjusted) {
          const current = await products.findById(id, tx)
          if (!current) throw AppError.notFound(`Product ${id} not found`)
          throw AppError.conflict(
            `Only ${current.available} units are available (${current.reserved} reserved); cannot take ${-delta}`,
            [
              {
                field: 'delta',
                message: 'would take the available stock below zero',
                received: String(delta),
              },
            ],
          )
        }
        await products.recordMovements(
          [
            {
              productId: id,
              deltaAvailable: delta,
              deltaReserved: 0,
              reason: `adjustment: ${reason.trim() || 'no reason given'}`.slice(0, stockReasonMaximum),
            },
          ],
          tx,
        )
        await appendAudit(tx, audit, {
          action: 'stock.adjusted',
          target: `product:${id}`,
          detail: { delta, reason: reason.trim().slice(0, stockReasonMaximum) },
        })
        return adjusted
      })
      return { product, etag: productETag(product.id, product.version) }
    },

    /** For other services: the products among `ids`, in the order asked, each once; unknown ids are left out. */
    async lookupProducts(ids: readonly string[]): Promise<ProductSummary[]> {
      const found = new Map((await products.findByIds(ids)).map((product) => [product.id, product]))
      const answered = new Set<string>()
      const summaries: ProductSummary[] = []
      for (const asked of ids) {
        const product = found.get(asked.toLowerCase())
        if (!product || answered.has(product.id)) continue
        answered.add(product.id)
        summaries.push({
          id: product.id,
          name: product.name,
          price: fromMinorUnits(product.priceCents),
          available: product.available,
          active: product.active,
        })
      }
      return summaries
    },
  }
}

export type ProductUseCases = ReturnType<typeof createProductUseCases>
