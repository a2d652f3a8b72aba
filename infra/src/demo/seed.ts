// The demo data seed: waits for the system, then through the gateway's public API only (as a client would) signs in
// the demo admin, registers the demo customer, and makes the catalogue, the orders, the chat room and the document.
// Every step finds what an earlier run made and keeps it, so running it again adds nothing.
import type { Product, TokenPair, User } from '@meridian/contracts'
import {
  type CollaborationSteps,
  type DemoDocument,
  type DemoRoom,
  ensureDemoDocument,
  ensureDemoRoom,
} from './collaboration.ts'
import { type DemoAccount, demoAdmin, demoCustomer, demoProducts } from './content.ts'
import { GatewayAnswerError, type GatewayApi, gatewayApi, waitUntil } from './gateway-api.ts'
import { type DemoOrder, ensureDemoOrders, type SignedIn } from './orders.ts'

/** The services the seed talks to (by their names in the gateway's /health report). */
export const seededServices = [
  'auth',
  'inventory',
  'order',
  'payment',
  'shipping',
  'realtime-gateway',
] as const

export interface SeedOptions {
  gatewayUrl: string
  /** where a client tokenizes its cards (the simulator in development) */
  paymentProviderUrl: string
  /** how long to wait for the services to be routed by the gateway, ms; default 180 s */
  readyTimeoutMs?: number
  /** how long the saga may take to move one order, ms; default 120 s */
  sagaTimeoutMs?: number
  log?: (line: string) => void
}

export interface SeedOutcome {
  products: { sku: string; id: string; created: boolean }[]
  customer: { id: string; created: boolean }
  orders: DemoOrder[]
  room: DemoRoom
  document: DemoDocument
}

/** Until the gateway routes each seeded service to an available instance (its /health lists them). */
export async function waitForSystem(gatewayUrl: string, timeoutMs: number): Promise<void> {
  await waitUntil(
    `the gateway at ${gatewayUrl} routes ${seededServices.join(', ')}`,
    async () => {
      const response = await fetch(`${gatewayUrl}/health`, { signal: AbortSignal.timeout(5000) })
      // whatever answers there before the gateway does (or its own 503) is simply not ready yet
      const health = (await response.json().catch(() => ({}))) as {
        upstreams?: Record<string, { available?: number }>
      }
      const routed = seededServices.every((name) => (health.upstreams?.[name]?.available ?? 0) > 0)
      return routed ? true : undefined
    },
    timeoutMs,
    1000,
  )
}

async function signIn(api: GatewayApi, account: DemoAccount): Promise<SignedIn> {
  try {
    const pair = await api.call<TokenPair>('POST', '/login', {
      body: { email: account.email, password: account.password },
      expected: [200],
    })
    // who the token is: the OpenID userinfo of the signed-in user
    const me = await api.call<{ sub: string }>('GET', '/userinfo', { token: pair.accessToken })
    return { id: me.sub, token: pair.accessToken }
  } catch (error) {
    if (error instanceof GatewayAnswerError && error.status === 401) {
      // create-admin would also make the customer an admin: they are deleted instead, and registered again
      const remedy =
        account.role === 'admin'
          ? `give it back with MERIDIAN_ADMIN_PASSWORD='${account.password}' ./scripts/create-admin --email ` +
            `${account.email} --reset-password`
          : `an admin deletes the user (DELETE /api/v1/users/{id}) and the next seed registers it again`
      throw new Error(
        `${account.email} exists but does not take the demo password (was it changed?): ${remedy}`,
      )
    }
    throw error
  }
}

/** Registers the demo customer (open registration) unless they exist; signs them in. */
async function ensureCustomer(api: GatewayApi): Promise<SignedIn & { created: boolean }> {
  const { name, email, password } = demoCustomer
  const registered = await api.request<User>('POST', '/api/v1/users', { body: { name, email, password } })
  if (registered.status !== 201 && registered.status !== 409) {
    throw new GatewayAnswerError(
      'POST /api/v1/users',
      registered.status,
      undefined,
      JSON.stringify(registered.body),
    )
  }
  return { ...(await signIn(api, demoCustomer)), created: registered.status === 201 }
}

/** Each demo product by its SKU: the existing one, else a new one with the demo's stock. */
async function ensureProducts(api: GatewayApi, admin: SignedIn): Promise<(Product & { created: boolean })[]> {
  const products = []
  for (const demo of demoProducts) {
    const existing = await api.find<Product>(`/api/v1/products?sku=${demo.sku}`, admin.token, () => true, 1)
    const product =
      existing ??
      (await api.call<Product>('POST', '/api/v1/products', {
        token: admin.token,
        body: { ...demo, active: true },
      }))
    products.push({ ...product, created: existing === undefined })
  }
  return products
}

export async function seedDemo(options: SeedOptions): Promise<SeedOutcome> {
  const log = options.log ?? (() => {})
  const api = gatewayApi(options.gatewayUrl, options.paymentProviderUrl)
  log(`waiting for the gateway at ${options.gatewayUrl} to route ${seededServices.join(', ')}`)
  await waitForSystem(options.gatewayUrl, options.readyTimeoutMs ?? 180_000)

  const admin = await signIn(api, demoAdmin)
  const customer = await ensureCustomer(api)
  log(`customer ${demoCustomer.email}: ${customer.created ? 'registered' : 'exists'}`)

  const products = await ensureProducts(api, admin)
  const made = products.filter((product) => product.created).length
  log(`catalogue: ${made} product(s) created, ${products.length - made} kept`)

  const collaboration: CollaborationSteps = { api, gatewayUrl: options.gatewayUrl, admin, customer }
  const room = await ensureDemoRoom(collaboration)
  log(`chat room: ${room.created ? 'created' : 'kept'}, ${room.messagesSent} message(s) sent`)
  const document = await ensureDemoDocument(collaboration)
  log(`document: ${document.created ? 'created' : 'kept'}`)

  log('orders: placing what is missing and waiting for the saga (seconds)')
  const orders = await ensureDemoOrders(
    { api, customer, admin, sagaTimeoutMs: options.sagaTimeoutMs ?? 120_000 },
    products,
  )
  for (const order of orders) log(`order ${order.id}: ${order.status}${order.created ? '' : ' (kept)'}`)

  return {
    products: products.map(({ sku, id, created }) => ({ sku, id, created })),
    customer: { id: customer.id, created: customer.created },
    orders,
    room,
    document,
  }
}
