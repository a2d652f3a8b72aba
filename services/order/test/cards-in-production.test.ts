// Order started as production (NODE_ENV=production, its own idempotency secret): an order body carrying a card, or a
// card number where the payment method id goes, is refused, 422 VALIDATION_ERROR naming the field, on every path that
// places an order, with nothing changed (no order, no event, no catalogue lookup); the same body with a payment method
// the provider made (pm_…) is placed. POST /payments' bodies: services/payment's test of the same name.
import { randomBytes, randomUUID } from 'node:crypto'
import type { ProductSummary } from '@meridian/contracts'
import { asUser, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildOrderTestApp, type OrderTestApp } from './support/app.ts'
import { type InventoryStandIn, startInventoryStandIn } from './support/inventory-stand-in.ts'
import { testAddress } from './support/place.ts'

const mug: ProductSummary = { id: randomUUID(), name: 'Blue mug', price: 19.99, available: 10, active: true }

let inventory: InventoryStandIn
let order: OrderTestApp

beforeAll(async () => {
  inventory = await startInventoryStandIn([mug])
  order = await buildOrderTestApp({
    ...tokenEnv,
    NODE_ENV: 'production',
    // the test's engines are the development ones, plaintext on this machine's loopback
    ENGINES_PLAINTEXT_ALLOWED: 'true',
    IDEMPOTENCY_SECRET: randomBytes(32).toString('base64url'),
    INVENTORY_SERVICE_NAME: inventory.name,
  })
})

afterAll(async () => {
  await order?.close()
  await inventory?.close()
})

const card = { number: '4242424242424242', expMonth: 12, expYear: 2099, cvc: '123' }

/** The paths that place an order for `customerId` (each also under /api/v1 and /api). */
const placingPaths = (customerId: string) =>
  ['/orders', `/users/${customerId}/orders`].flatMap((path) => [path, `/api/v1${path}`, `/api${path}`])

async function footprint(customerId: string) {
  const [orders, events] = await Promise.all([
    order.sql`select 1 from orders where customer_id = ${customerId}`,
    order.sql`select 1 from outbox`,
  ])
  return { orders: orders.length, events: events.length, lookups: inventory.lookups.length }
}

const body = (customerId: string, payment: unknown) => ({
  customerId,
  items: [{ productId: mug.id, quantity: 1, price: mug.price }],
  shippingAddress: testAddress,
  payment,
})

describe('order in production: no card number in an order body', () => {
  it('when an order body carries a card (alone or beside a token) on any path that places an order, then 422 VALIDATION_ERROR naming payment.card, the number never echoed, and nothing changed', async () => {
    const customerId = randomUUID()
    const before = await footprint(customerId)
    for (const url of placingPaths(customerId))
      for (const payment of [{ card }, { token: 'pm_card_visa', card }]) {
        const answer = await order.app.inject({
          method: 'POST',
          url,
          headers: { ...asUser(customerId), 'idempotency-key': randomUUID() },
          payload: body(customerId, payment),
        })
        const context = `${url} ${Object.keys(payment).join(',')}`
        const error = expectErrorEnvelope(answer, 422, 'VALIDATION_ERROR', { context })
        expect(
          error.details?.map((detail) => detail.field),
          context,
        ).toContain('payment.card')
        expect(answer.body, context).not.toContain('4242')
      }
    expect(await footprint(customerId)).toEqual(before)
  })

  it('when a card number is sent where the payment method goes, then 422 naming payment.token, and nothing changed', async () => {
    const customerId = randomUUID()
    const before = await footprint(customerId)
    for (const token of [card.number, '4242 4242 4242 4242', 'card_4242424242424242']) {
      const answer = await order.app.inject({
        method: 'POST',
        url: '/api/v1/orders',
        headers: asUser(customerId),
        payload: body(customerId, { token }),
      })
      const error = expectErrorEnvelope(answer, 422, 'VALIDATION_ERROR', { context: token })
      expect(error.details).toEqual([expect.objectContaining({ field: 'payment.token' })])
      expect(answer.body).not.toContain('4242')
    }
    expect(await footprint(customerId)).toEqual(before)
  })

  it('when the order names a payment method the provider made (pm_…), then it is placed: the refusal is the card', async () => {
    const customerId = randomUUID()
    const answer = await order.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: asUser(customerId),
      payload: body(customerId, { token: 'pm_card_visa' }),
    })
    expect(answer.statusCode, answer.body).toBe(201)
    const [row] = await order.sql`select payment_token from orders where id = ${answer.json().orderId}`
    expect(row).toEqual({ paymentToken: 'pm_card_visa' })
  })
})
