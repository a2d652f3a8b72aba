// The returns part of the commerce fault campaign (`faults`; FAULTS_ONLY=return-payment-kill,return-inventory-kill):
// orders of 2 units shipped before the fault, a return asked for each (1 or 2 units), then the returns' goods received
// at a steady pace while the fault strikes (payment or inventory SIGKILLed and restarted: a receipt's refund or restock
// asked while its service is down or killed in its middle), every fourth receipt sent twice at once. Once every
// return has settled, the reconciliation (src/reconcile.ts): each completed return refunded once at the provider,
// exactly its lines, and its units back in stock; a return left received, or escalated, is lost.
import type { Product } from '@meridian/contracts'
import type { Sql } from '@meridian/db'
import type { MeridianSystem } from '@meridian/infra/system'
import { type CampaignFault, strikeBeside, withCampaignDatabases } from './campaign.ts'
import { type Customer, cards, e2eClient } from './client.ts'
import { type Reconciliation, reconcile, settle } from './reconcile.ts'
import { failureKey, placeSteadily } from './steady-orders.ts'

interface AskedReturn {
  returnId: string
  orderId: string
}

/** Sends each receipt at its slot (a fourth of them twice at once); the answers that were not 202, by status. */
async function receiveSteadily(
  client: ReturnType<typeof e2eClient>,
  admin: { email: string; token: string },
  returns: readonly AskedReturn[],
  ratePerSecond: number,
): Promise<Record<string, number>> {
  const refused: Record<string, number> = {}
  const count = (key: string) => {
    refused[key] = (refused[key] ?? 0) + 1
  }
  const started = Date.now()
  const sending: Promise<void>[] = []
  for (const [i, asked] of returns.entries()) {
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, started + (i * 1000) / ratePerSecond - Date.now())),
    )
    for (let copy = 0; copy < (i % 4 === 3 ? 2 : 1); copy++)
      sending.push(
        client.receiveReturn(admin, asked.returnId).then(
          (answer) => {
            if (answer.status !== 202) count(`receive ${answer.status}`)
          },
          (error: unknown) => count(`receive ${failureKey(error)}`),
        ),
      )
  }
  await Promise.all(sending)
  return refused
}

/**
 * How long the run's returns took from their receipt to their completion (p50 and the longest, from their process's
 * log), and how many had a step asked again after its wait ran out: what the fault cost them.
 */
async function returnTimes(order: Sql): Promise<string> {
  const [row] = await order<{ p50: number | null; longest: number | null; askedAgain: number }[]>`
    with spans as (
      select r.id,
        extract(epoch from (max(s.at) filter (where s.detail = 'completed')
                            - min(s.at) filter (where s.detail = 'received'))) as seconds,
        count(*) filter (where s.outcome = 'timed_out') as timeouts
      from returns r join process_steps s on s.type = 'return' and s.key = r.id::text
      group by r.id)
    select percentile_cont(0.5) within group (order by seconds) as p50, max(seconds) as longest,
      count(*) filter (where timeouts > 0)::int as asked_again
    from spans`
  const seconds = (value: number | null | undefined) => (value == null ? '–' : Number(value).toFixed(1))
  return `received → completed p50 ${seconds(row?.p50)} s, longest ${seconds(row?.longest)} s; ${row?.askedAgain ?? 0} returns had a step asked again after its wait`
}

export async function runReturnFault(
  system: MeridianSystem,
  fault: CampaignFault,
  options: { orders: number; ratePerSecond: number; say: (line: string) => void },
): Promise<Reconciliation> {
  const client = e2eClient({ ...system, admin: system.admin ?? { email: '', password: '' } })
  const admin = await client.loginAdmin()
  const customers: Customer[] = []
  for (let i = 0; i < 5; i++) customers.push(await client.registerCustomer())
  const initialStock = options.orders * 2
  const product: Product = await client.createProduct(admin, { stock: initialStock, price: 12.34 })
  const token = await client.tokenizeCard(cards.good)
  const ownerOf = (i: number) => customers[i % customers.length] as Customer

  // each order's customer as it was placed: the accepted orders come back in the order their answers did, not the
  // order they were sent in (the i-th accepted is not the i-th placed: its customer would read another's order, 404)
  const owners = new Map<string, Customer>()
  const placed = await placeSteadily({
    count: options.orders,
    ratePerSecond: 10,
    place: async (i) => {
      const answer = await client.placeOrder(ownerOf(i), { product, quantity: 2, paymentToken: token })
      if (answer.status === 201) owners.set(answer.body.orderId, ownerOf(i))
      return answer
    },
  })
  const orderIds = [...placed.accepted.keys()]
  const ownerOfOrder = (orderId: string) => owners.get(orderId) as Customer
  await Promise.all(
    orderIds.map((orderId) => client.orderReaches(ownerOfOrder(orderId), orderId, 'shipped', 120_000)),
  )
  const returns: AskedReturn[] = []
  for (const [i, orderId] of orderIds.entries()) {
    const asked = await client.requestReturnOk(ownerOfOrder(orderId), orderId, [
      { productId: product.id, quantity: 1 + (i % 2) },
    ])
    returns.push({ returnId: asked.returnId, orderId })
  }

  options.say(
    `${fault.name}: ${fault.what}; ${returns.length} returns of ${orderIds.length} shipped orders received at ${options.ratePerSecond}/s`,
  )
  const striking = strikeBeside(fault, system)
  const receiptsRefused = await receiveSteadily(client, admin, returns, options.ratePerSecond)
  const strikeFailure = await striking
  if (strikeFailure !== undefined) throw strikeFailure

  return withCampaignDatabases(system, async (databases) => {
    const settleSeconds = await settle(databases.order)
    options.say(`${fault.name}: ${await returnTimes(databases.order)}`)
    return await reconcile(
      databases,
      (orderId) => client.providerSummary(orderId),
      {
        fault: fault.name,
        sent: placed.sent,
        accepted: new Set(orderIds),
        refused: { ...placed.refused, ...receiptsRefused },
        productId: product.id,
        initialStock,
      },
      settleSeconds,
    )
  })
}
