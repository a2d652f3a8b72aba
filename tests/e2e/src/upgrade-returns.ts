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

/**
 * The answers of a service away while it restarts, for the orders and the returns of a campaign alike: 503 from the
 * gateway (no instance ready), 502 and 504 from it when the instance it forwarded to stopped mid-request, and, while
 * the gateway itself restarts, no listener or a closing connection. A 4xx or any other 5xx is the versions disagreeing.
 */
export const awayWhileRestarting: ReadonlySet<string> = new Set([
  '502',
  '503',
  '504',
  'ECONNREFUSED',
  'ECONNRESET',
  'UND_ERR_SOCKET',
])
const away = awayWhileRestarting

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
  const items = [{ productId: each.productId, quantity: 1 }]
  const asked = await untilNotAway(refused, () =>
    client.requestReturn(each.customer, each.orderId, items, 'changed my mind'),
  )
  if (asked?.status !== 202) return
  each.returnId = asked.body.returnId
  await untilNotAway(refused, () => client.receiveReturn(admin, asked.body.returnId))
}

/**
 * `call` until it answers 202 or something other than a service away, for up to a minute (scaled), a second apart;
 * every other answer and error is counted in `refused`. The last answer, or undefined when none came.
 */
async function untilNotAway<Answer extends { status: number }>(
  refused: Record<string, number>,
  call: () => Promise<Answer>,
): Promise<Answer | undefined> {
  const count = (code: string) => {
    refused[code] = (refused[code] ?? 0) + 1
  }
  let last: Answer | undefined
  for (const until = Date.now() + scaledMs(60_000); Date.now() < until; await sleep(1000)) {
    try {
      last = await call()
      if (last.status === 202) return last
      count(String(last.status))
      if (!away.has(String(last.status))) return last
    } catch (error) {
      count(codeOf(error))
    }
  }
  return last
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
