// The reconciliation of a fault run (the commerce campaign, `faults`, and the cluster's, `cluster`): once every order
// has settled, what each service's database and the provider hold for the orders clients were told were accepted —
// orders by final state, charges, refunds, reservations, shipments, their returns, stock — and the effects that were
// lost or duplicated, which must both be 0. A shipped order's refunds are its completed returns' (each refunded once,
// exactly its refundAmount) and no more; its returned units are back in stock.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Sql } from '@meridian/db'
import type { ProviderSummary } from './client.ts'

export interface Reconciliation {
  fault: string
  sent: number
  accepted: number
  /** refused with an error answer (the client was told: not the system's to keep) */
  refused: Record<string, number>
  byStatus: Record<string, number>
  charges: number
  refunds: number
  reservations: Record<string, number>
  shipments: number
  /** the accepted orders' returns by status */
  returns: Record<string, number>
  lost: string[]
  duplicated: string[]
  /** shipped: units of the product that left in shipped orders; returned: units its completed returns brought back */
  stock: { initial: number; available: number; reserved: number; shipped: number; returned: number }
  settleSeconds: number
}

/** What the run sent: the orders accepted (201), what was refused, and the product they all bought. */
export interface PlacedOrders {
  fault: string
  sent: number
  accepted: ReadonlySet<string>
  refused: Record<string, number>
  productId: string
  initialStock: number
  /**
   * only orders created since (a run that strikes several faults in turn): the others are earlier runs'. Only orders
   * of the run's product count in any case: others (the upgrade campaign's returned orders) are not the run's
   */
  since?: Date
}

export interface ReconcileDatabases {
  order: Sql
  inventory: Sql
  shipping: Sql
}

export const finalStatuses = new Set(['shipped', 'delivered', 'failed', 'payment_failed', 'cancelled'])

/**
 * Waits until every order is final, no compensation still runs and no return waits for its restock or refund (the
 * run's database holds this run's only), or `timeoutMs`; then `lateAnswersMs` more for the provider's late answers (a charge that was in flight) to get the
 * reconciler's rounds. Resolves with the seconds it took.
 */
export async function settle(
  order: Sql,
  { timeoutMs = 240_000, lateAnswersMs = 12_000 }: { timeoutMs?: number; lateAnswersMs?: number } = {},
): Promise<number> {
  const started = Date.now()
  for (;;) {
    const [row] = await order<{ open: number }[]>`
      select (select count(*)::int from orders o join sagas s on s.order_id = o.id
              where (o.status not in ('shipped', 'delivered', 'failed', 'payment_failed', 'cancelled')
                     or s.compensation = 'running'))
           + (select count(*)::int from returns r join process_instances p
              on p.type = 'return' and p.key = r.id::text
              where r.status = 'received' and p.escalation is null) as open`
    if ((row?.open ?? 0) === 0 || Date.now() - started > timeoutMs) break
    await sleep(1000)
  }
  await sleep(lateAnswersMs)
  return (Date.now() - started) / 1000
}

/** A return as the reconciliation sees it: its status, refund, units of the run's product, and whether escalated. */
interface ReturnRow {
  id: string
  status: string
  refundCents: number
  units: number
  escalated: boolean
}

/** Every return by its order's id (the order database's returns and their process instances). */
async function returnsByOrder(order: Sql, productId: string): Promise<Map<string, ReturnRow[]>> {
  const rows = await order<(ReturnRow & { orderId: string })[]>`
    select r.id, r.order_id, r.status, r.refund_cents::int as refund_cents,
      coalesce((select sum(i.quantity)::int from return_items i
                where i.return_id = r.id and i.product_id = ${productId}), 0) as units,
      coalesce(p.escalation is not null, false) as escalated
    from returns r left join process_instances p on p.type = 'return' and p.key = r.id::text`
  const byOrder = new Map<string, ReturnRow[]>()
  for (const { orderId, ...row } of rows) byOrder.set(orderId, [...(byOrder.get(orderId) ?? []), row])
  return byOrder
}

/** Counts every effect of the accepted orders and lists the lost and duplicated ones. */
export async function reconcile(
  databases: ReconcileDatabases,
  providerSummary: (orderId: string) => Promise<ProviderSummary>,
  placed: PlacedOrders,
  settleSeconds: number,
): Promise<Reconciliation> {
  const { order, inventory, shipping } = databases
  const ids = [...placed.accepted]
  const since = placed.since ?? new Date(0)
  const statusRows = await order<{ id: string; status: string; compensation: string }[]>`
    select o.id, o.status, s.compensation from orders o left join sagas s on s.order_id = o.id
    where o.created_at >= ${since}
      and exists (select 1 from order_items i where i.order_id = o.id and i.product_id = ${placed.productId})`
  const statusOf = new Map(statusRows.map((row) => [row.id, row]))
  const reservationRows = await inventory<{ orderId: string; status: string }[]>`
    select order_id, status from reservations`
  const reservationsOf = new Map<string, string[]>()
  for (const row of reservationRows)
    reservationsOf.set(row.orderId, [...(reservationsOf.get(row.orderId) ?? []), row.status])
  const shipmentRows = await shipping<{ orderId: string; n: number }[]>`
    select order_id, count(*)::int as n from shipments group by order_id`
  const shipmentsOf = new Map(shipmentRows.map((row) => [row.orderId, row.n]))
  const [stock] = await inventory<{ available: number; reserved: number }[]>`
    select available, reserved from products where id = ${placed.productId}`
  const unitRows = await order<{ orderId: string; units: number }[]>`
    select order_id, sum(quantity)::int as units from order_items
    where product_id = ${placed.productId} group by order_id`
  const unitsOf = new Map(unitRows.map((row) => [row.orderId, row.units]))
  const returnsOf = await returnsByOrder(order, placed.productId)
  const summaries = new Map<string, ProviderSummary>()
  for (const id of ids) summaries.set(id, await providerSummary(id))

  const lost: string[] = []
  const duplicated: string[] = []
  const byStatus: Record<string, number> = {}
  const reservations: Record<string, number> = {}
  const returnStatuses: Record<string, number> = {}
  let charges = 0
  let refunds = 0
  let shippedUnits = 0
  let returnedUnits = 0
  for (const id of ids) {
    const row = statusOf.get(id)
    const summary = summaries.get(id) as ProviderSummary
    const held = reservationsOf.get(id) ?? []
    const shipmentCount = shipmentsOf.get(id) ?? 0
    const status = row?.status ?? 'missing'
    byStatus[status] = (byStatus[status] ?? 0) + 1
    for (const each of held) reservations[each] = (reservations[each] ?? 0) + 1
    charges += summary.charges
    refunds += summary.refunds
    if (!row || !finalStatuses.has(status)) lost.push(`${id}: accepted but ${status}`)
    if (row?.compensation === 'escalated') lost.push(`${id}: a compensation escalated`)
    if (summary.charges > 1) duplicated.push(`${id}: charged ${summary.charges} times`)
    if (summary.refunded > summary.charged) duplicated.push(`${id}: refunded beyond its charge`)
    if (held.length > 1) duplicated.push(`${id}: ${held.length} reservations`)
    if (shipmentCount > 1) duplicated.push(`${id}: ${shipmentCount} shipments`)
    const returns = returnsOf.get(id) ?? []
    for (const each of returns) returnStatuses[each.status] = (returnStatuses[each.status] ?? 0) + 1
    if (status === 'shipped' || status === 'delivered') {
      shippedUnits += unitsOf.get(id) ?? 1
      const completed = returns.filter((each) => each.status === 'completed')
      returnedUnits += completed.reduce((sum, each) => sum + each.units, 0)
      const owed = completed.reduce((sum, each) => sum + each.refundCents, 0)
      if (summary.charges !== 1)
        lost.push(`${id}: shipped with ${summary.charges} charges, ${summary.refunds} refunds`)
      // each completed return refunded once, exactly its lines; nothing else refunded
      if (summary.refunds > completed.length || summary.refunded > owed)
        duplicated.push(
          `${id}: ${summary.refunds} refunds of ${summary.refunded} cents for ${completed.length} completed returns of ${owed}`,
        )
      else if (summary.refunds < completed.length || summary.refunded < owed)
        lost.push(
          `${id}: ${summary.refunds} refunds of ${summary.refunded} cents for ${completed.length} completed returns of ${owed}`,
        )
      for (const each of returns) {
        if (each.escalated) lost.push(`${id}: return ${each.id} escalated (${each.status})`)
        else if (each.status === 'received') lost.push(`${id}: return ${each.id} received, never completed`)
      }
      if (held[0] !== 'shipped') lost.push(`${id}: shipped but its reservation is ${held[0] ?? 'missing'}`)
      if (shipmentCount !== 1) lost.push(`${id}: shipped with ${shipmentCount} shipments`)
    } else {
      if (summary.refunded !== summary.charged)
        lost.push(`${id}: ${status} with ${summary.charged - summary.refunded} cents not refunded`)
      if (held.includes('held')) lost.push(`${id}: ${status} with stock still held`)
      if (shipmentCount > 0) lost.push(`${id}: ${status} with a shipment`)
    }
  }
  // orders the service holds that no client was told about (a duplicate of a refused request)
  for (const row of statusRows.filter((each) => !placed.accepted.has(each.id)))
    duplicated.push(`${row.id}: an order no client was told was accepted (${row.status})`)
  const stockNow = {
    initial: placed.initialStock,
    available: stock?.available ?? -1,
    reserved: stock?.reserved ?? -1,
    shipped: shippedUnits,
    returned: returnedUnits,
  }
  const accounted = stockAccounted(stockNow)
  if (accounted !== stockNow.initial)
    (accounted > stockNow.initial ? duplicated : lost).push(
      `stock: ${stockNow.available} available + ${stockNow.reserved} reserved + ${shippedUnits} shipped - ${returnedUnits} returned != ${placed.initialStock}`,
    )

  return {
    fault: placed.fault,
    sent: placed.sent,
    accepted: placed.accepted.size,
    refused: placed.refused,
    byStatus,
    charges,
    refunds,
    reservations,
    shipments: ids.reduce((sum, id) => sum + (shipmentsOf.get(id) ?? 0), 0),
    returns: returnStatuses,
    lost,
    duplicated,
    stock: stockNow,
    settleSeconds,
  }
}

/** The units the stock accounts for: available, held, and shipped less what completed returns brought back. */
export const stockAccounted = (stock: Reconciliation['stock']): number =>
  stock.available + stock.reserved + stock.shipped - stock.returned

/** `key n, key n` in key order, or `none`. */
export const pairs = (record: Record<string, number>): string =>
  Object.entries(record)
    .sort()
    .map(([key, n]) => `${key} ${n}`)
    .join(', ') || 'none'

export function report(result: Reconciliation): string {
  return [
    `== ${result.fault}`,
    `orders: ${result.sent} sent, ${result.accepted} accepted (201), refused: ${pairs(result.refused)}`,
    `final states: ${pairs(result.byStatus)} (settled ${result.settleSeconds.toFixed(0)} s after the last order)`,
    `provider: ${result.charges} charges, ${result.refunds} refunds; reservations: ${pairs(result.reservations)}; shipments: ${result.shipments}`,
    `returns: ${pairs(result.returns)}`,
    `stock: ${result.stock.initial} = ${result.stock.available} available + ${result.stock.reserved} reserved + ${result.stock.shipped} shipped - ${result.stock.returned} returned`,
    `lost effects: ${result.lost.length}${result.lost.length ? `\n  ${result.lost.slice(0, 20).join('\n  ')}` : ''}`,
    `duplicated effects: ${result.duplicated.length}${result.duplicated.length ? `\n  ${result.duplicated.slice(0, 20).join('\n  ')}` : ''}`,
  ].join('\n')
}
