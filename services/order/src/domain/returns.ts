// Returns as use cases: ask for one (the order's customer or an admin, for a shipped or delivered order, at most what
// was ordered and is not returned yet, each line at the order's price: the refund is exactly those lines in integer
// cents), read one or an order's list, mark its goods received (an admin or a carrier: the process puts the stock
// back and refunds), or reject it before receipt. Every change is the return's process's decision (return-process.ts)
// applied by the process module in the same transaction as the return's row and its events.
import { randomUUID } from 'node:crypto'
import {
  AppError,
  type ErrorDetail,
  fromMinorUnits,
  paginate,
  type RequestReturnBody,
  type Return,
  type ReturnListQuery,
} from '@meridian/contracts'
import { type Queryable, type Sql, transaction } from '@meridian/db'
import { ProcessConflict, type ProcessManager } from '@meridian/process'
import { type AuditSource, appendAudit, type Principal } from '@meridian/service-kit'
import type { OrdersRepository } from '../data/orders-repository.ts'
import type { ReturnItemRecord, ReturnRecord, ReturnsRepository } from '../data/returns-repository.ts'
import { isCustomerOrAdmin } from './access.ts'
import { isReturnable, orderHref } from './order-links.ts'
import { requestedReturn } from './return-machine.ts'
import { returnProcessType } from './return-process.ts'

export const returnHref = (returnId: string) => `/api/v1/returns/${returnId}`

export interface ReturnUseCasesDependencies {
  sql: Sql
  orders: OrdersRepository
  returns: ReturnsRepository
  processes: Pick<ProcessManager, 'start' | 'apply'>
  /** the carriers' names the deployment configures (RETURNS_CARRIER_KEYS): those a return may go back with */
  carriers: readonly string[]
}

/**
 * Who reports a return's goods received, as the route established it: a carrier by its key (named in
 * RETURNS_CARRIER_KEYS), or an admin by its credential.
 */
export type Receiver = { carrier: string } | { admin: Principal }

/** The receiver as the return keeps it: `carrier:<name>`, `api-key:<id>` or `user:<subject>`. */
export const receiverOf = (receiver: Receiver): string =>
  'carrier' in receiver
    ? `carrier:${receiver.carrier}`
    : receiver.admin.apiKeyId !== undefined
      ? `api-key:${receiver.admin.apiKeyId}`
      : `user:${receiver.admin.subject}`

function presentReturn(record: ReturnRecord): Return {
  const self = returnHref(record.id)
  const links: Return['_links'] = {
    self: { href: self, method: 'GET' },
    order: { href: orderHref(record.orderId), method: 'GET' },
  }
  if (record.status === 'requested') {
    links.receive = { href: `${self}/receive`, method: 'POST' }
    links.reject = { href: `${self}/reject`, method: 'POST' }
  }
  return {
    returnId: record.id,
    orderId: record.orderId,
    customerId: record.customerId,
    status: record.status,
    items: record.items.map((item) => ({
      productId: item.productId,
      quantity: item.quantity,
      price: fromMinorUnits(item.priceCents),
      name: item.name,
    })),
    refundAmount: fromMinorUnits(record.refundCents),
    ...(record.carrier === null ? {} : { carrier: record.carrier }),
    // which admin (or key) received it is for the audit trail, not for the customer
    ...(record.receivedBy === null
      ? {}
      : { receivedBy: record.receivedBy.startsWith('carrier:') ? record.receivedBy : 'admin' }),
    reason: record.reason,
    ...(record.rejectionReason === null ? {} : { rejectionReason: record.rejectionReason }),
    ...(record.paymentId === null ? {} : { paymentId: record.paymentId }),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    _links: links,
  }
}

/** A return may name only a carrier the deployment has (422 naming `carrier` otherwise). */
function assertKnownCarrier(carriers: readonly string[], carrier: string | undefined): void {
  if (carrier === undefined || carriers.includes(carrier)) return
  throw AppError.validation(
    [{ field: 'carrier', message: 'is not a carrier this shop returns goods with', received: carrier }],
    'The return names an unknown carrier',
  )
}

/**
 * A carrier receives only the returns bound to it: another's (or an unbound one) is not found, as for anyone who may
 * not see it; its carrier never changes once the return is written. An admin may receive any.
 */
async function assertReceivable(
  returns: ReturnsRepository,
  returnId: string,
  receiver: Receiver,
  tx: Queryable,
): Promise<void> {
  if (!('carrier' in receiver)) return
  const bound = await returns.findById(returnId, tx)
  if (bound?.carrier !== receiver.carrier) throw AppError.notFound(`Return ${returnId} not found`)
}

export function createReturnUseCases({
  sql,
  orders,
  returns,
  processes,
  carriers,
}: ReturnUseCasesDependencies) {
  /** The return, if the principal may see it: its customer or an admin; anyone else 404 (not told it exists). */
  async function findVisible(returnId: string, principal: Principal): Promise<ReturnRecord> {
    const found = await returns.findById(returnId)
    if (!found || !isCustomerOrAdmin(principal, found.customerId)) {
      throw AppError.notFound(`Return ${returnId} not found`)
    }
    return found
  }

  /** A decision of the return's process on `fact`, in a transaction: 404 without one, 409 when refused. */
  async function applyToReturn(
    returnId: string,
    fact: { kind: 'received' } | { kind: 'rejected'; reason: string },
    source: string,
    audit: AuditSource,
    receiver?: Receiver,
  ) {
    try {
      await transaction(sql, async (tx) => {
        if (receiver) await assertReceivable(returns, returnId, receiver, tx)
        const applied = await processes.apply(returnProcessType, returnId, fact, tx, {
          eventType: fact.kind,
          eventId: source,
        })
        if (!applied) throw AppError.notFound(`Return ${returnId} not found`)
        if (fact.kind === 'received') await returns.recordReceipt(returnId, source, tx)
        await appendAudit(tx, audit, {
          action: `return.${fact.kind}`,
          target: `return:${returnId}`,
          detail: fact.kind === 'rejected' ? { reason: fact.reason } : {},
        })
      })
    } catch (error) {
      if (error instanceof ProcessConflict) throw AppError.conflict(error.message)
      throw error
    }
    const after = await returns.findById(returnId)
    if (!after) throw AppError.notFound(`Return ${returnId} not found`)
    return presentReturn(after)
  }

  return {
    /**
     * A return of lines of the order: the order's row is locked (two returns of one order are checked one after the
     * other, so together they never exceed what was ordered), then the lines are checked — each product once, of the
     * order, at most its ordered quantity less what returns not rejected hold — and the return, its lines and its
     * process (return.requested in the outbox) are written in the same transaction.
     */
    async requestReturn(orderId: string, body: RequestReturnBody, principal: Principal): Promise<Return> {
      assertKnownCarrier(carriers, body.carrier)
      const created = await transaction(sql, async (tx) => {
        const locked = await orders.lockById(orderId, tx)
        if (!locked || !isCustomerOrAdmin(principal, locked.customerId)) {
          throw AppError.notFound(`Order ${orderId} not found`)
        }
        if (!isReturnable(locked.status)) {
          throw AppError.conflict(
            `Order ${orderId} is ${locked.status}: only a shipped or delivered order can be returned`,
            [{ field: 'status', message: 'the order has not shipped', received: locked.status }],
          )
        }
        const [order, returned] = await Promise.all([
          orders.findById(orderId, tx),
          returns.returnedQuantities(orderId, tx),
        ])
        if (!order) throw AppError.notFound(`Order ${orderId} not found`)
        const details: ErrorDetail[] = []
        const seen = new Set<string>()
        const lines: ReturnItemRecord[] = []
        body.items.forEach((item, index) => {
          const field = `items.${index}`
          const ordered = order.items.filter((line) => line.productId === item.productId)
          if (seen.has(item.productId)) {
            details.push({
              field: `${field}.productId`,
              message: 'the product is named twice in this return',
              received: item.productId,
            })
            return
          }
          seen.add(item.productId)
          if (ordered.length === 0) {
            details.push({
              field: `${field}.productId`,
              message: 'the order has no such item',
              received: item.productId,
            })
            return
          }
          const quantity = ordered.reduce((sum, line) => sum + line.quantity, 0)
          const left = quantity - (returned.get(item.productId) ?? 0)
          if (item.quantity > left) {
            details.push({
              field: `${field}.quantity`,
              message: `at most ${left} of product ${item.productId} can still be returned (ordered ${quantity})`,
              received: String(item.quantity),
            })
            return
          }
          const first = ordered[0]
          if (first)
            lines.push({
              productId: item.productId,
              name: first.name,
              quantity: item.quantity,
              priceCents: first.priceCents,
            })
        })
        if (details.length > 0)
          throw AppError.validation(details, 'The return asks for more than can be returned')
        const record = await returns.insert(
          {
            id: randomUUID(),
            orderId,
            customerId: order.customerId,
            reason: body.reason,
            refundCents: lines.reduce((sum, line) => sum + line.priceCents * line.quantity, 0),
            items: lines,
            carrier: body.carrier ?? null,
          },
          tx,
        )
        await processes.start(returnProcessType, record.id, requestedReturn(orderId), tx, {
          owner: record,
          source: { eventType: 'request' },
        })
        return record
      })
      return presentReturn(created)
    },

    getReturn: async (returnId: string, principal: Principal): Promise<Return> =>
      presentReturn(await findVisible(returnId, principal)),

    /** The order's returns, newest first; the order's customer or an admin, another's order is 404. */
    async listOrderReturns(
      orderId: string,
      query: ReturnListQuery,
      principal: Principal,
      path: string,
    ): Promise<{ data: Return[] } & ReturnType<typeof paginate>> {
      const order = await orders.findById(orderId)
      if (!order || !isCustomerOrAdmin(principal, order.customerId)) {
        throw AppError.notFound(`Order ${orderId} not found`)
      }
      const { page, limit } = query
      const { rows, total } = await returns.listByOrder(orderId, { limit, offset: (page - 1) * limit })
      return { data: rows.map(presentReturn), ...paginate(path, query, { page, limit }, total) }
    },

    /** The goods came back: the same receipt twice answers the same, moving nothing again. */
    receive: (returnId: string, receiver: Receiver, audit: AuditSource) =>
      applyToReturn(returnId, { kind: 'received' }, receiverOf(receiver), audit, receiver),

    /** Refused before receipt (an admin). */
    reject: (returnId: string, reason: string, audit: AuditSource) =>
      applyToReturn(returnId, { kind: 'rejected', reason }, 'admin', audit),
  }
}

export type ReturnUseCases = ReturnType<typeof createReturnUseCases>
