// The customers, administrator, payment token and products of a run of the whole system (@meridian/infra/system),
// made through its gateway as a client would: shared by bench:saga and bench:realtime's orders phase.
import type { MeridianSystem } from '@meridian/infra/system'
import { type Dispatcher, request } from 'undici'

export interface Setup {
  customers: { id: string; token: string }[]
  adminToken: string
  paymentToken: string
}

export async function api<Body>(url: string, method: string, body?: unknown, token?: string): Promise<Body> {
  const response = await fetch(url, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text}`)
  return JSON.parse(text) as Body
}

/**
 * Registers and signs in `customerCount` customers (20 by default), signs the administrator in, makes a payment method
 * of a test card at the provider.
 */
export async function setUp(system: MeridianSystem, customerCount = 20): Promise<Setup> {
  const gateway = system.gatewayUrl
  if (!system.admin) throw new Error('the run has no administrator')
  const login = (email: string, password: string) =>
    api<{ accessToken: string }>(`${gateway}/login`, 'POST', { email, password }).then(
      (pair) => pair.accessToken,
    )
  const adminToken = await login(system.admin.email, system.admin.password)
  const customers: Setup['customers'] = []
  for (let i = 0; i < customerCount; i++) {
    const email = `bench-${i}-${Date.now().toString(36)}@example.com`
    const password = `bench-password-${i}-${Math.random().toString(36).slice(2)}`
    const user = await api<{ id: string }>(`${gateway}/api/v1/users`, 'POST', {
      name: 'Bench',
      email,
      password,
    })
    customers.push({ id: user.id, token: await login(email, password) })
  }
  // a payment method made of a test card as the provider's elements make it in a shop's page: Stripe's POST
  // /v1/payment_methods, form-encoded, with a publishable key (the simulator takes any pk_test_…)
  const made = await fetch(`${system.simulatorUrl}/v1/payment_methods`, {
    method: 'POST',
    body: new URLSearchParams({
      key: 'pk_test_meridian_bench',
      type: 'card',
      'card[number]': '4242424242424242',
      'card[exp_month]': '12',
      'card[exp_year]': String(new Date().getUTCFullYear() + 2),
      'card[cvc]': '123',
    }),
  })
  const text = await made.text()
  if (made.status !== 200)
    throw new Error(`POST ${system.simulatorUrl}/v1/payment_methods: ${made.status} ${text}`)
  const { id: paymentToken } = JSON.parse(text) as { id: string }
  return { customers, adminToken, paymentToken }
}

/** A product of its own (ample stock): its orders are one phase's. */
export async function newProduct(
  system: MeridianSystem,
  setup: Setup,
): Promise<{ id: string; price: number }> {
  return api<{ id: string; price: number }>(
    `${system.gatewayUrl}/api/v1/products`,
    'POST',
    { sku: `BENCH-${Date.now().toString(36)}`, name: 'Bench product', price: 9.99, stock: 10_000_000 },
    setup.adminToken,
  )
}

/** What placing a bench order needs: the gateway, a customer signed in, the product and a provider token. */
export interface OrderPlacement {
  gatewayUrl: string
  customer: { id: string; token: string }
  product: { id: string; price: number }
  paymentToken: string
}

/** POST /api/v1/orders through the gateway: one unit of the product for the customer, paid with the token. */
export function placeOrder(dispatcher: Dispatcher, order: OrderPlacement) {
  return request(`${order.gatewayUrl}/api/v1/orders`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${order.customer.token}` },
    body: JSON.stringify({
      customerId: order.customer.id,
      items: [{ productId: order.product.id, quantity: 1, price: order.product.price }],
      shippingAddress: { street: '1 Bench Street', city: 'Loadville', zip: '10000' },
      payment: { token: order.paymentToken },
    }),
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  })
}
