// Orders: the catalogue, placing an order with a test card (made a payment method at the payment provider by the
// browser, as the provider's own elements do in a shop's page: the card goes to the provider only, never to Meridian),
// and the user's orders with their status, kept current without a reload (each of the user's notifications, and every
// few seconds while an order is on its way).
import type { Order, PlacedOrder, Product } from '@meridian/contracts'
import { api } from '../api.ts'
import type { ConsoleConfig } from '../config.ts'
import { dataTable, errorBox, h, loading, panel, show, submitWith } from '../ui.ts'
import type { View, ViewContext } from './view.ts'

/** The simulator's test cards (infra/src/payment-simulator/README.md). */
export const testCards = [
  { number: '4242424242424242', label: 'Visa 4242 — succeeds' },
  { number: '4000000000000077', label: '4000…0077 — succeeds after a delay' },
  { number: '4000000000000002', label: '4000…0002 — declined' },
  { number: '4000002760003184', label: '4000…3184 — asks for 3-D Secure' },
] as const

/**
 * The provider's authentication page of an order whose payment waits for it (3-D Secure), opened beside the console
 * (which keeps the session and follows the order): only an http(s) address becomes a link.
 */
function authenticateChildren(order: Order): (string | HTMLElement)[] {
  const href = order._links.authenticate?.href
  if (!href || !/^https?:\/\//.test(href)) return []
  return [
    ' ',
    h(
      'a',
      { href, target: '_blank', rel: 'noopener noreferrer', 'data-action': 'authenticate' },
      'Authenticate the payment',
    ),
  ]
}

// no longer moving by itself: shipped waits for its delivery, which a notification announces
const settled = new Set(['shipped', 'delivered', 'cancelled', 'failed', 'payment_failed'])

interface Page<Item> {
  data: Item[]
}

/**
 * The publishable key the console makes payment methods with: one for tests, which the simulator takes (any pk_test_…).
 * A publishable key only makes payment methods; it is no secret.
 */
const publishableKey = 'pk_test_meridian_console'

/**
 * A payment method (pm_…) of a test card, made at the provider as Stripe.js makes one: POST /v1/payment_methods,
 * form-encoded, the publishable key as its `key` parameter (a simple cross-origin request: no preflight; the provider
 * answers it with Access-Control-Allow-Origin: *). Only the payment method's id goes to Meridian.
 */
async function paymentMethodOf(config: ConsoleConfig, number: string): Promise<string> {
  const response = await fetch(`${config.paymentProviderUrl}/v1/payment_methods`, {
    method: 'POST',
    body: new URLSearchParams({
      key: publishableKey,
      type: 'card',
      'card[number]': number,
      'card[exp_month]': '12',
      'card[exp_year]': String(new Date().getUTCFullYear() + 2),
      'card[cvc]': '123',
    }),
  })
  const body = (await response.json()) as { id?: string; error?: { message?: string } }
  if (!response.ok || !body.id) throw new Error(body.error?.message ?? 'The card was not accepted')
  return body.id
}

export function ordersView({ session, config }: ViewContext): View {
  const catalogue = h('div', {}, loading('the catalogue'))
  const orders = h('div', {}, loading('your orders'))
  const errors = h('div', { 'aria-live': 'assertive' })
  let timer: ReturnType<typeof setTimeout> | undefined
  let closed = false

  async function readOrders(): Promise<void> {
    clearTimeout(timer)
    try {
      const page = await api<Page<Order>>(
        'GET',
        `/api/v1/users/${session.user.id}/orders?limit=20&sort=createdAt:desc`,
        { token: session.token },
      )
      show(orders, ordersTable(page.data))
      // while an order is on its way, look again soon
      if (!closed && page.data.some((order) => !settled.has(order.status)))
        timer = setTimeout(readOrders, 2000)
    } catch (error) {
      show(orders, errorBox(error))
    }
  }

  async function readCatalogue(): Promise<void> {
    try {
      const page = await api<Page<Product>>('GET', '/api/v1/products?limit=50', { token: session.token })
      show(catalogue, orderForm(page.data.filter((product) => product.active)))
    } catch (error) {
      show(catalogue, errorBox(error))
    }
  }

  function orderForm(products: Product[]): HTMLElement {
    if (products.length === 0) return h('p', {}, 'The catalogue is empty.')
    const product = h(
      'select',
      { id: 'product', name: 'product' },
      ...products.map((item) =>
        h(
          'option',
          { value: item.id },
          `${item.name} — ${item.price.toFixed(2)} (${item.available} available)`,
        ),
      ),
    )
    const quantity = h('input', {
      id: 'quantity',
      name: 'quantity',
      type: 'number',
      min: 1,
      max: 100,
      value: 1,
    })
    const card = h(
      'select',
      { id: 'card', name: 'card' },
      ...testCards.map((item) => h('option', { value: item.number }, item.label)),
    )
    const submit = h('button', { type: 'submit' }, 'Place order')
    return h(
      'form',
      {
        'aria-label': 'Place an order',
        onsubmit: submitWith(submit, errors, async () => {
          const chosen = products.find((item) => item.id === product.value)!
          const token = await paymentMethodOf(config, card.value)
          await api<PlacedOrder>('POST', '/api/v1/orders', {
            token: session.token,
            body: {
              customerId: session.user.id,
              items: [{ productId: chosen.id, quantity: Number(quantity.value), price: chosen.price }],
              shippingAddress: { street: '1 Console Street', city: 'Webville', zip: '12345' },
              payment: { token },
            },
          })
          await Promise.all([readOrders(), readCatalogue()])
        }),
      },
      h('label', { for: 'product' }, 'Product'),
      product,
      h('label', { for: 'quantity' }, 'Quantity'),
      quantity,
      h('label', { for: 'card' }, 'Test card'),
      card,
      submit,
    )
  }

  function ordersTable(list: Order[]): HTMLElement {
    if (list.length === 0) return h('p', {}, 'No orders yet.')
    return dataTable(
      'orders',
      'Your orders, newest first',
      ['Order', 'Items', 'Total', 'Status'],
      list.map((order) =>
        h(
          'tr',
          { 'data-order-id': order.id },
          h('td', {}, h('code', {}, order.id.slice(0, 8))),
          h(
            'td',
            {},
            order.items.map((item) => `${item.quantity} × ${item.name ?? item.productId}`).join(', '),
          ),
          h('td', {}, order.total.toFixed(2)),
          h(
            'td',
            { class: `status status-${order.status}`, 'data-status': order.status },
            order.status,
            ...authenticateChildren(order),
          ),
        ),
      ),
    )
  }

  void readCatalogue()
  void readOrders()
  const element = panel(
    'orders',
    'Orders',
    h('h2', {}, 'Place an order'),
    catalogue,
    errors,
    h('h2', {}, 'Your orders'),
    orders,
  )
  return {
    element,
    refresh: () => void readOrders(),
    close() {
      closed = true
      clearTimeout(timer)
    },
  }
}
