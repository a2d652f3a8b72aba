// The orders part of a campaign: customers, a product and cards made through the gateway, then orders placed at a
// steady pace while the fault strikes (a fixed number, or as long as the fault lasts and some after), and once every
// order has settled, the reconciliation of what each service and the provider hold (src/reconcile.ts). Used by the
// fault campaign (src/faults.ts) and the upgrade campaign (src/upgrade.ts). Through several gateways, orders go as a
// load balancer sends them (src/gateway-balancer.ts), each under an Idempotency-Key of its own, so that one whose
// connection was refused is safely sent to the next gateway.
import { randomUUID } from 'node:crypto'
import type { PlacedOrder, Product } from '@meridian/contracts'
import type { MeridianSystem } from '@meridian/infra/system'
import { type CampaignFault, strikeBeside, withCampaignDatabases } from './campaign.ts'
import { type ApiResponse, type Customer, cards, e2eClient } from './client.ts'
import { createGatewayBalancer } from './gateway-balancer.ts'
import { type Reconciliation, reconcile, settle } from './reconcile.ts'
import { placeSteadily } from './steady-orders.ts'

export interface OrderFaultOptions {
  /** orders placed; with `untilStruck`, the ones placed once the fault is over */
  orders: number
  /** place orders for as long as the fault strikes, then `orders` more */
  untilStruck?: boolean
  ratePerSecond: number
  /** units of the campaign's product in stock */
  stock: number
  /** the customers who order (default: ten registered for the run) */
  customers?: Customer[]
  /** every gateway of the system, behind a load balancer (default: the system's address alone) */
  balanced?: boolean
  say: (line: string) => void
}

export async function runOrderFault(
  system: MeridianSystem,
  fault: CampaignFault,
  options: OrderFaultOptions,
): Promise<Reconciliation> {
  const { orders, ratePerSecond, stock, say } = options
  const signIn = system.admin ?? { email: '', password: '' }
  const client = e2eClient({ ...system, admin: signIn })
  const admin = await client.loginAdmin()
  const customers: Customer[] = options.customers ? [...options.customers] : []
  if (customers.length === 0) for (let i = 0; i < 10; i++) customers.push(await client.registerCustomer())
  const product: Product = await client.createProduct(admin, { stock })
  const goodToken = await client.tokenizeCard(cards.good)
  const declinedToken = await client.tokenizeCard(cards.declined)

  const count = options.untilStruck ? `orders while it lasts and ${orders} after` : `${orders} orders`
  say(`${fault.name}: ${fault.what}; ${count} at ${ratePerSecond}/s for ${stock} in stock`)
  // a fault that cannot strike fails the run once the orders are placed (never as an unhandled rejection)
  let struckAt: number | undefined
  const striking = strikeBeside(fault, system)
  void striking.then(() => {
    struckAt = Date.now()
  })
  const after = (orders * 1000) / ratePerSecond
  // several gateways: a load balancer over them, which probes their readiness while the orders go
  const gateways = options.balanced ? system.gatewayUrls : []
  const clients = gateways.map((gatewayUrl) => e2eClient({ ...system, gatewayUrl, admin: signIn }))
  const balancer = gateways.length > 1 ? createGatewayBalancer(gateways) : undefined
  const placeAt = (request: (gateway: ReturnType<typeof e2eClient>) => Promise<ApiResponse<PlacedOrder>>) =>
    balancer ? balancer.call((index) => request(clients[index] ?? client)) : request(client)
  const placing = placeSteadily({
    ...(options.untilStruck
      ? { more: () => struckAt === undefined || Date.now() < struckAt + after }
      : { count: orders }),
    ratePerSecond,
    place: (i) => {
      const order = {
        product,
        paymentToken: i % 20 === 19 ? declinedToken : goodToken,
        idempotencyKey: randomUUID(),
      }
      const customer = customers[i % customers.length] as Customer
      return placeAt((gateway) => gateway.placeOrder(customer, order))
    },
  })
  const { sent, accepted, refused } = await placing.finally(() => balancer?.close())
  const strikeFailure = await striking
  if (strikeFailure !== undefined) throw strikeFailure

  return withCampaignDatabases(system, async (databases) => {
    const settleSeconds = await settle(databases.order)
    return await reconcile(
      databases,
      (orderId) => client.providerSummary(orderId),
      {
        fault: fault.name,
        sent,
        accepted: new Set(accepted.keys()),
        refused,
        productId: product.id,
        initialStock: stock,
      },
      settleSeconds,
    )
  })
}
