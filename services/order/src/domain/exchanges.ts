// Exchanges as use cases: ask for one (the order's customer or an admin, for a shipped or delivered order: each line
// at most what was ordered and is not returned or exchanged yet, its replacement an active product at the catalogue's
// price now), read one or an order's list, and mark its goods received (an admin). Every change is the exchange's
// process's decision (exchange-process.ts) applied by the process module with the exchange's row and its events.
import { randomUUID } from 'node:crypto'
import {
  AppError,
  type ErrorDetail,
  type Exchange,
  fromMinorUnits,
  type ProductSummary,
  type RequestExchangeBody,
  toMinorUnits,
} from '@meridian/contracts'
import { type Sql, transaction } from '@meridian/db'
import { ProcessConflict, type ProcessManager } from '@meridian/process'
import { type AuditSource, appendAudit, type Principal } from '@meridian/service-kit'
import type { ProductCatalogue } from '../clients/inventory-catalogue.ts'
import type { ExchangeItemRecord, ExchangeRecord, ExchangesRepository } from '../data/exchanges-repository.ts'
import type { OrderRecord, OrdersRepository } from '../data/orders-repository.ts'
import type { ReturnsRepository } from '../data/returns-repository.ts'
import { isCustomerOrAdmin } from './access.ts'
import { exchangedItem } from './exchange-commands.ts'
import { type ExchangeTiming, requestedExchange } from './exchange-machine.ts'
import { exchangeHref, exchangeProcessType } from './exchange-process.ts'
import { isReturnable, orderHref } from './order-links.ts'

export interface ExchangeUseCasesDependencies {
  sql: Sql
  orders: OrdersRepository
  returns: Pick<ReturnsRepository, 'returnedQuantities'>
  exchanges: ExchangesRepository
  catalogue: ProductCatalogue
  processes: Pick<ProcessManager, 'start' | 'apply'>
  timing: ExchangeTiming
}

function presentExchange(record: ExchangeRecord): Exchange {
  const self = exchangeHref(record.id)
  const links: Exchange['_links'] = {
    self: { href: self, method: 'GET' },
    order: { href: orderHref(record.orderId), method: 'GET' },
  }
  if (record.status === 'awaiting_goods') links.receive = { href: `${self}/receive`, method: 'POST' }
  return {
    exchangeId: record.id,
    orderId: record.orderId,
    customerId: record.customerId,
    status: record.status,
    items: record.items.map(exchangedItem),
    charge: fromMinorUnits(record.chargeCents),
    refund: fromMinorUnits(record.refundCents),
    ...(record.failureReason === null ? {} : { failureReason: record.failureReason }),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    _links: links,
  }
}

/** A requested line as exchanged (the order's price, the replacement's now), or why it cannot be (its field, relative to the line). */
function exchangedLine(
  item: RequestExchangeBody['items'][number],
  order: OrderRecord,
  taken: Map<string, number>,
  replacements: Map<string, ProductSummary>,
  named: { seen: Set<string>; replaced: Set<string> },
): { line: ExchangeItemRecord } | { refusal: ErrorDetail } {
  const ordered = order.items.filter((line) => line.productId === item.productId)
  const quantity = ordered.reduce((sum, line) => sum + line.quantity, 0)
  const left = quantity - (taken.get(item.productId) ?? 0)
  const replacement = replacements.get(item.replacementProductId.toLowerCase())
  const replacementPriceCents = replacement?.active ? toMinorUnits(replacement.price) : undefined
  const twice = named.seen.has(item.productId)
  const replacedTwice = named.replaced.has(item.replacementProductId)
  named.seen.add(item.productId)
  named.replaced.add(item.replacementProductId)
  const refuse = (field: string, message: string, received: string) => ({
    refusal: { field, message, received },
  })
  const [first] = ordered
  if (twice) return refuse('productId', 'the product is named twice in this exchange', item.productId)
  if (replacedTwice) {
    const message = 'the replacement is named twice in this exchange'
    return refuse('replacementProductId', message, item.replacementProductId)
  }
  if (!first) return refuse('productId', 'the order has no such item', item.productId)
  if (item.quantity > left) {
    const message = `at most ${left} of product ${item.productId} can still be exchanged (ordered ${quantity})`
    return refuse('quantity', message, String(item.quantity))
  }
  if (!replacement || replacementPriceCents === undefined)
    return refuse('replacementProductId', 'no such product is for sale', item.replacementProductId)
  return {
    line: {
      productId: item.productId,
      name: first.name,
      quantity: item.quantity,
      priceCents: first.priceCents,
      replacementProductId: item.replacementProductId,
      replacementName: replacement.name,
      replacementPriceCents,
    },
  }
}

/**
 * The exchanged lines, each checked — its product once, of the order, at most what is left of it, its replacement
 * once and an active product — or the details of every line that is not (a 422 naming them).
 */
function exchangedLines(
  body: RequestExchangeBody,
  order: OrderRecord,
  taken: Map<string, number>,
  replacements: Map<string, ProductSummary>,
): { lines: ExchangeItemRecord[]; details: ErrorDetail[] } {
  const details: ErrorDetail[] = []
  const lines: ExchangeItemRecord[] = []
  const named = { seen: new Set<string>(), replaced: new Set<string>() }
  for (const [index, item] of body.items.entries()) {
    const checked = exchangedLine(item, order, taken, replacements, named)
    if ('line' in checked) lines.push(checked.line)
    else details.push({ ...checked.refusal, field: `items.${index}.${checked.refusal.field}` })
  }
  return { lines, details }
}

export function createExchangeUseCases(deps: ExchangeUseCasesDependencies) {
  const { sql, orders, exchanges, processes } = deps

  async function findVisible(exchangeId: string, principal: Principal): Promise<ExchangeRecord> {
    const found = await exchanges.findById(exchangeId)
    if (!found || !isCustomerOrAdmin(principal, found.customerId))
      throw AppError.notFound(`Exchange ${exchangeId} not found`)
    return found
  }

  return {
    /**
     * An exchange of lines of the order: the replacements priced from the catalogue first (outside the transaction),
     * then under the order's lock (two exchanges or returns of one order are checked one after the other) the lines
     * checked against what is left, and the exchange and its process (exchange.requested, the replacements'
     * reservation) written together. A price rise needs a payment method: the request's or the order's (422).
     */
    async requestExchange(
      orderId: string,
      body: RequestExchangeBody,
      principal: Principal,
      requestId?: string,
    ): Promise<Exchange> {
      const ids = [...new Set(body.items.map((item) => item.replacementProductId.toLowerCase()))]
      const products = await deps.catalogue.lookup(ids, requestId)
      const replacements = new Map(products.map((product) => [product.id.toLowerCase(), product]))
      const created = await transaction(sql, async (tx) => {
        const locked = await orders.lockById(orderId, tx)
        if (!locked || !isCustomerOrAdmin(principal, locked.customerId))
          throw AppError.notFound(`Order ${orderId} not found`)
        if (!isReturnable(locked.status)) {
          throw AppError.conflict(
            `Order ${orderId} is ${locked.status}: only a shipped or delivered order can be exchanged`,
            [{ field: 'status', message: 'the order has not shipped', received: locked.status }],
          )
        }
        const [order, taken, orderToken] = await Promise.all([
          orders.findById(orderId, tx),
          deps.returns.returnedQuantities(orderId, tx),
          exchanges.orderPaymentToken(orderId, tx),
        ])
        if (!order) throw AppError.notFound(`Order ${orderId} not found`)
        const { lines, details } = exchangedLines(body, order, taken, replacements)
        if (details.length > 0) throw AppError.validation(details, 'The exchange cannot be made as asked')
        const sum = (cents: (line: ExchangeItemRecord) => number) =>
          lines.reduce((total, line) => total + cents(line) * line.quantity, 0)
        const difference = sum((line) => line.replacementPriceCents) - sum((line) => line.priceCents)
        const paymentToken = body.paymentToken ?? orderToken
        if (difference > 0 && paymentToken === null) {
          throw AppError.validation(
            [{ field: 'paymentToken', message: 'the replacements cost more: a payment method is needed' }],
            'The exchange needs a payment method',
          )
        }
        const record = await exchanges.insert(
          {
            id: randomUUID(),
            orderId,
            customerId: order.customerId,
            items: lines,
            chargeCents: Math.max(difference, 0),
            refundCents: Math.max(-difference, 0),
            paymentToken,
            shippingAddress: order.shippingAddress,
          },
          tx,
        )
        const started = requestedExchange(deps.timing, record)
        await processes.start(exchangeProcessType, record.id, started, tx, {
          owner: record,
          source: { eventType: 'request' },
        })
        return record
      })
      return presentExchange(created)
    },

    getExchange: async (exchangeId: string, principal: Principal): Promise<Exchange> =>
      presentExchange(await findVisible(exchangeId, principal)),

    /** The order's exchanges, newest first; the order's customer or an admin, another's order is 404. */
    async listOrderExchanges(orderId: string, principal: Principal): Promise<Exchange[]> {
      const order = await orders.findById(orderId)
      if (!order || !isCustomerOrAdmin(principal, order.customerId))
        throw AppError.notFound(`Order ${orderId} not found`)
      return (await exchanges.listByOrder(orderId)).map(presentExchange)
    },

    /** The returned goods came back (an admin): the same receipt twice answers the same, moving nothing again. */
    async receive(exchangeId: string, audit: AuditSource): Promise<Exchange> {
      try {
        await transaction(sql, async (tx) => {
          const applied = await processes.apply(exchangeProcessType, exchangeId, { kind: 'received' }, tx, {
            eventType: 'received',
            eventId: 'admin',
          })
          if (!applied) throw AppError.notFound(`Exchange ${exchangeId} not found`)
          await appendAudit(tx, audit, {
            action: 'exchange.received',
            target: `exchange:${exchangeId}`,
            detail: {},
          })
        })
      } catch (error) {
        if (error instanceof ProcessConflict) throw AppError.conflict(error.message)
        throw error
      }
      const after = await exchanges.findById(exchangeId)
      if (!after) throw AppError.notFound(`Exchange ${exchangeId} not found`)
      return presentExchange(after)
    },
  }
}

export type ExchangeUseCases = ReturnType<typeof createExchangeUseCases>
