// Pure rules of reserving stock: the lines of an order as reserved, and which of them cannot be.

export interface StockLine {
  productId: string
  quantity: number
}

/** What a reservation needs to know of a product it locked. */
export interface ProductStock {
  id: string
  active: boolean
  available: number
}

export type ShortageReason = 'unknown product' | 'insufficient stock'

export interface Shortage {
  reason: ShortageReason
  /** every line that cannot be reserved, as requested */
  items: StockLine[]
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether an id can name a row of this service (its ids are uuids; anything else names nothing here). */
export const isUuid = (id: string): boolean => uuidPattern.test(id)

/**
 * One line per product (the quantities of repeated products added up), in product id order: the order in which the
 * rows are locked and the reservation's lines are kept. Ids are compared lower-cased, as PostgreSQL compares uuids.
 */
export function mergeLines(items: readonly StockLine[]): StockLine[] {
  const quantities = new Map<string, number>()
  for (const { productId, quantity } of items) {
    const id = isUuid(productId) ? productId.toLowerCase() : productId
    quantities.set(id, (quantities.get(id) ?? 0) + quantity)
  }
  return [...quantities]
    .map(([productId, quantity]) => ({ productId, quantity }))
    .sort((a, b) => (a.productId < b.productId ? -1 : a.productId > b.productId ? 1 : 0))
}

/**
 * Why the lines cannot all be reserved from `stock`, or undefined when they can. A product that does not exist is
 * 'unknown product' (named first when there is one); one that is inactive or has fewer available units than asked
 * is 'insufficient stock'. The shortage lists every line that fails.
 */
export function findShortage(
  lines: readonly StockLine[],
  stock: ReadonlyMap<string, ProductStock>,
): Shortage | undefined {
  const unknown: StockLine[] = []
  const short: StockLine[] = []
  for (const line of lines) {
    const product = stock.get(line.productId)
    if (!product) unknown.push(line)
    else if (!product.active || product.available < line.quantity) short.push(line)
  }
  if (unknown.length === 0 && short.length === 0) return undefined
  return {
    reason: unknown.length > 0 ? 'unknown product' : 'insufficient stock',
    items: [...unknown, ...short],
  }
}
