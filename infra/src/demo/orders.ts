// The demo customer's orders, one in each state a newcomer should see, made as a client makes them: placed with a
// card token from the payment provider, then moved on by the saga, an admin's delivery report or the customer's
// cancellation. An order already in a state is kept, so a second seed adds none.
import type { Order, OrderStatus, PlacedOrder, Product, Shipment } from '@meridian/contracts'
import { demoCards, demoShippingAddress } from './content.ts'
import type { GatewayApi } from './gateway-api.ts'
import { waitUntil } from './gateway-api.ts'

export interface SignedIn {
  id: string
  token: string
}

/** The states the demo shows, and how each is reached. */
export const demoOrderStates = ['delivered', 'shipped', 'payment_failed', 'cancelled'] as const
export type DemoOrderState = (typeof demoOrderStates)[number]

export interface DemoOrder {
  id: string
  status: DemoOrderState
  /** made by this run (false: found from an earlier one) */
  created: boolean
}

interface OrderSteps {
  api: GatewayApi
  customer: SignedIn
  admin: SignedIn
  /** how long the saga may take to move one order, ms */
  sagaTimeoutMs: number
}

const finalStatuses: readonly OrderStatus[] = ['delivered', 'cancelled', 'failed']

/** The customer's newest order in `status`, if any. */
async function orderIn(steps: OrderSteps, status: OrderStatus): Promise<Order | undefined> {
  const { api, customer } = steps
  return api.find<Order>(
    `/api/v1/users/${customer.id}/orders?status=${status}&sort=createdAt:desc`,
    customer.token,
    () => true,
    1,
  )
}

async function place(steps: OrderSteps, product: Product, quantity: number, card: string): Promise<string> {
  const { api, customer } = steps
  const placed = await api.call<PlacedOrder>('POST', '/api/v1/orders', {
    token: customer.token,
    body: {
      customerId: customer.id,
      items: [{ productId: product.id, quantity, price: product.price }],
      shippingAddress: demoShippingAddress,
      payment: { token: await api.tokenizeCard(card) },
    },
  })
  return placed.orderId
}

/** Waits until the order is `wanted`; fails at once when it ended in another final status. */
async function reaches(steps: OrderSteps, orderId: string, wanted: OrderStatus): Promise<void> {
  const { api, customer } = steps
  await waitUntil(
    `order ${orderId} is ${wanted}`,
    async () => {
      const order = await api.call<Order>('GET', `/api/v1/orders/${orderId}`, { token: customer.token })
      if (order.status === wanted) return true
      if (finalStatuses.includes(order.status)) {
        throw new Error(`order ${orderId} ended ${order.status}, not ${wanted}`)
      }
      return undefined
    },
    steps.sagaTimeoutMs,
    // once a second: four orders polled side by side stay well inside the gateway's limit per client
    1000,
  )
}

/** The admin reports the order's shipment delivered (as a carrier would). */
async function deliver(steps: OrderSteps, orderId: string): Promise<void> {
  const { api, admin } = steps
  const shipment = await waitUntil(
    `order ${orderId} has a shipment`,
    async () => api.find<Shipment>(`/api/v1/shipments?orderId=${orderId}`, admin.token, () => true, 1),
    steps.sagaTimeoutMs,
  )
  await api.call('POST', `/api/v1/shipments/${shipment.id}/deliver`, { token: admin.token, expected: [200] })
}

/** Places one order and moves it to `state`. */
async function makeOrder(steps: OrderSteps, state: DemoOrderState, products: Product[]): Promise<string> {
  const pick = (index: number) => products[index % products.length] as Product
  switch (state) {
    case 'delivered': {
      const orderId = await place(steps, pick(0), 2, demoCards.good)
      await reaches(steps, orderId, 'shipped')
      await deliver(steps, orderId)
      await reaches(steps, orderId, 'delivered')
      return orderId
    }
    case 'shipped': {
      const orderId = await place(steps, pick(4), 1, demoCards.good)
      await reaches(steps, orderId, 'shipped')
      return orderId
    }
    case 'payment_failed': {
      const orderId = await place(steps, pick(1), 1, demoCards.declined)
      await reaches(steps, orderId, 'payment_failed')
      return orderId
    }
    case 'cancelled': {
      // declined first, so nothing was charged or reserved: the cancellation has nothing to compensate and its
      // outcome does not race the saga
      const orderId = await place(steps, pick(2), 3, demoCards.declined)
      await reaches(steps, orderId, 'payment_failed')
      await steps.api.call('POST', `/api/v1/orders/${orderId}/cancel`, {
        token: steps.customer.token,
        expected: [202],
      })
      await reaches(steps, orderId, 'cancelled')
      return orderId
    }
  }
}

/** One order in each demo state: the customer's existing one, else a new one (made side by side). */
export async function ensureDemoOrders(steps: OrderSteps, products: Product[]): Promise<DemoOrder[]> {
  return Promise.all(
    demoOrderStates.map(async (status): Promise<DemoOrder> => {
      const existing = await orderIn(steps, status)
      if (existing) return { id: existing.id, status, created: false }
      return { id: await makeOrder(steps, status, products), status, created: true }
    }),
  )
}
