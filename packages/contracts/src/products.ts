// The product resource of inventory's catalogue: what clients send and receive, which fields lists may sort, select
// and filter, and the internal lookup other services price and check orders with.
import { type Static, Type } from 'typebox'
import { Money } from './money.ts'
import { listQueryParameters, QueryObject } from './pagination.ts'
import { Nullable, Text, VisibleText } from './schema-kinds.ts'

/** A stock-keeping unit: letters, digits and . _ - /, starting with a letter or digit; unique in the catalogue. */
const Sku = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._/-]*$',
  description: 'stock-keeping unit, unique: letters, digits and . _ - /',
})
// stored trimmed
const Name = VisibleText({ minLength: 1, maxLength: 200 })
const Description = Text({ maxLength: 2000 })
const Quantity = { minimum: 0, maximum: 1_000_000_000 } as const
const ProductId = Type.String({ format: 'uuid', maxLength: 36 })

export const Product = Type.Object(
  {
    id: ProductId,
    sku: Sku,
    name: Name,
    description: Type.Optional(Description),
    price: Money,
    available: Type.Integer({ minimum: 0, description: 'units that can be reserved now' }),
    reserved: Type.Integer({
      minimum: 0,
      description: 'units held for orders (paid, not yet shipped or released)',
    }),
    active: Type.Boolean({ description: 'an inactive product is listed but cannot be reserved' }),
    createdAt: Type.String({ format: 'date-time', maxLength: 64 }),
    updatedAt: Type.String({ format: 'date-time', maxLength: 64 }),
  },
  { additionalProperties: false },
)
export type Product = Static<typeof Product>

/** Fields a list may sort on (`sort=field:asc|desc`) and select (`fields=`): allow-lists, never column names from input. */
export const productSortFields = ['name', 'price', 'available', 'createdAt'] as const
export const productFields = [
  'id',
  'sku',
  'name',
  'description',
  'price',
  'available',
  'reserved',
  'active',
  'createdAt',
  'updatedAt',
] as const
export type ProductField = (typeof productFields)[number]

/** A product in a sparse list: any subset of the fields. */
export const PartialProduct = Type.Partial(Product)

export const CreateProductBody = Type.Object(
  {
    sku: Sku,
    name: Name,
    description: Type.Optional(Description),
    price: Money,
    stock: Type.Integer({ ...Quantity, description: 'the initial available quantity' }),
    active: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
)
export type CreateProductBody = Static<typeof CreateProductBody>

/** A partial change; stock changes go through stock adjustments, never here. */
export const UpdateProductBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Nullable(Description)),
    price: Type.Optional(Money),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateProductBody = Static<typeof UpdateProductBody>

/** POST /products/{id}/stock-adjustments: units received (positive) or written off (negative). */
export const StockAdjustmentBody = Type.Object(
  {
    delta: Type.Integer({
      minimum: -1_000_000_000,
      maximum: 1_000_000_000,
      description:
        'non-zero: added to (or, negative, taken from) the available units; reserved units are never touched',
    }),
    reason: Text({ minLength: 1, maxLength: 200, description: 'why, kept in the stock movements' }),
  },
  { additionalProperties: false },
)
export type StockAdjustmentBody = Static<typeof StockAdjustmentBody>

export const ProductListQuery = QueryObject(
  {
    ...listQueryParameters({ sortFields: productSortFields, fields: productFields }),
    active: Type.Optional(Type.Boolean()),
    sku: Type.Optional(Sku),
  },
  { additionalProperties: false },
)
export type ProductListQuery = Static<typeof ProductListQuery>

export const ProductIdParams = Type.Object({ id: ProductId })
export type ProductIdParams = Static<typeof ProductIdParams>

/** POST /internal/products/lookup (other services, e.g. order pricing an order): products by id. */
export const ProductLookupBody = Type.Object(
  { ids: Type.Array(ProductId, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
)
export type ProductLookupBody = Static<typeof ProductLookupBody>

export const ProductSummary = Type.Object(
  {
    id: ProductId,
    name: Name,
    price: Money,
    available: Type.Integer({ minimum: 0 }),
    active: Type.Boolean(),
  },
  { additionalProperties: false },
)
export type ProductSummary = Static<typeof ProductSummary>

/** The products found, in the order asked (an unknown id is simply absent). */
export const ProductLookup = Type.Object(
  { products: Type.Array(ProductSummary) },
  { additionalProperties: false },
)
export type ProductLookup = Static<typeof ProductLookup>
