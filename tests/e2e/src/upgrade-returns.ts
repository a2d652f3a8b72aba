// Returns through an upgrade: orders shipped before the campaign starts moving instances are returned while it moves
// them — each asked for by its customer and received by an operator through the gateway, one after each move, so
// returns are asked for, received and refunded by old and new instances alike — and, once everything has settled,
// each must have completed with exactly its refund at the provider. A request that found a service away (503, a
// refused connection) is asked again; one whose answer was lost (a reset connection) and that was taken meanwhile is
// then answered 422 (nothing left to return), which counts as refused: a problem the account names.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Product } from '@meridian/contracts'
import { scaledMs } from '@meridian/testkit'
import { type Caller, type Customer, cards, type e2eClient } from './client.ts'

type Client = ReturnType<typeof e2eClient>

export interface ReturnCase {
  customer: Customer
  orderId: string
  productId: string
  /** what the provider charged for the order (cents) */
  chargedCents: number
  returnId?: string
}

export interface ReturnsAccount {
  /** orders returned during the campaign */
  asked: number
  /** returns that completed with exactly their refund, once */
  completed: number
  /** answers other than the one expected, by status or error code, retries included */
  refused: Record<string, number>
  /** what went wrong with a return, one line each (none when every return went through) */
  problems: string[]
}

const price = 7.5
const away = new Set(['502', '503', '504', 'ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET'])

/**
 * `count` orders of one item, each by a customer of its own (the reconciliation of the campaign's orders reads its
 * customers' orders: these are not among them), shipped: what the campaign will return.
 */
export async function shippedOrders(client: Client, admin: Caller, count: number): Promise<ReturnCase[]> {
  if (count === 0) return []
  const product: Product = await client.createProduct(admin, { stock: count, price })
  const cases: ReturnCase[] = []
  for (let i = 0; i < count; i++) {
    const customer = await client.registerCustomer()
    const orderId = await client.placeOrderOk(customer, { product, card: cards.good })
    cases.push({ customer, orderId, productId: product.id, chargedCents: Math.round(price * 100) })
  }
  for (const each of cases) await client.orderReaches(each.customer, each.orderId, ['shipped', 'delivered'])
  return cases
}

/** The code a call failed with: its status, or the network error's code. */
function codeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause
  return cause?.code ?? (error as { code?: string }).code ?? (error instanceof Error ? error.name : 'error')
}

/**
 * Asks for the case's return and receives it, retrying what met a service away for up to a minute (scaled); counts
 * every other answer as refused. The campaign returns one order after each instance it moves.
 */
export async function returnOne(
  client: Client,
  admin: Caller,
  each: ReturnCase,
  refused: Record<string, number>,
): Promise<void> {
  const count = (code: string) => {
    refused[code] = (refused[code] ?? 0) + 1
  }
  const deadline = () => Date.now() + scaledMs(60_000)
  for (const until = deadline(); each.returnId === undefined && Date.now() < until; ) {
    try {
      const items = [{ productId: each.productId, quantity: 1 }]
      const asked = await client.requestReturn(each.customer, each.orderId, items, 'changed my mind')
      if (asked.status === 202) each.returnId = asked.body.returnId
      else {
        count(String(asked.status))
        if (!away.has(String(asked.status))) return
      }
    } catch (error) {
      count(codeOf(error))
    }
    if (each.returnId === undefined) await sleep(1000)
  }
  const returnId = each.returnId
  if (returnId === undefined) return
  for (const until = deadline(); Date.now() < until; ) {
    try {
      const received = await client.receiveReturn(admin, returnId)
      if (received.status === 202) return
      count(String(received.status))
      if (!away.has(String(received.status))) return
    } catch (error) {
      count(codeOf(error))
    }
    await sleep(1000)
  }
}

/** Once the campaign is over: each return completed, and the provider refunded its order's charge once. */
export async function returnsAccount(
  client: Client,
  cases: readonly ReturnCase[],
  refused: Record<string, number>,
): Promise<ReturnsAccount> {
  const problems: string[] = []
  let completed = 0
  for (const each of cases) {
    if (each.returnId === undefined) {
      problems.push(`order ${each.orderId}: its return was never taken`)
      continue
    }
    try {
      await client.returnReaches(each.customer, each.returnId, 'completed', scaledMs(60_000))
      const summary = await client.providerSummary(each.orderId)
      if (summary.refunds !== 1 || summary.refunded !== each.chargedCents)
        problems.push(
          `return ${each.returnId}: ${summary.refunds} refunds of ${summary.refunded} cents, not one of ${each.chargedCents}`,
        )
      else completed++
    } catch (error) {
      problems.push(`return ${each.returnId}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  for (const [code, times] of Object.entries(refused))
    if (!away.has(code)) problems.push(`returns answered ${code} ×${times}`)
  return { asked: cases.length, completed, refused, problems }
}
