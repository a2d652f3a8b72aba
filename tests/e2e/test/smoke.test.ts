// The system answers end to end today: through the gateway an administrator stocks a product, a customer orders it
// with a good card, reads the order back, and the provider charged the order once; the gateway serves the console.
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, type Customer, cards, e2eClient } from '../src/client.ts'
import '../src/system-context.ts'

const client = e2eClient(inject('system'))

describe('smoke: placing an order through the gateway', () => {
  let admin: Caller
  let customer: Customer

  beforeAll(async () => {
    admin = await client.loginAdmin()
    customer = await client.registerCustomer()
  })

  it('when a customer orders a stocked product with a good card, then it is placed, readable with links, and charged once', async () => {
    const product = await client.createProduct(admin, { stock: 5 })
    expect(product.available).toBe(5)

    const placed = await client.placeOrder(customer, { product, quantity: 1, card: cards.good })
    expect(placed.status, JSON.stringify(placed.body)).toBe(201)
    const location = placed.headers.get('location')
    expect(location).toMatch(new RegExp(`/orders/${placed.body.orderId}$`))

    const order = await client.readOrder(customer, placed.body.orderId)
    expect(order).toMatchObject({ id: placed.body.orderId, customerId: customer.id, total: product.price })
    expect(order._links.self).toEqual({ href: `/api/v1/orders/${placed.body.orderId}`, method: 'GET' })

    const summary = await client.providerSummaryReaches(
      placed.body.orderId,
      'one charge',
      (seen) => seen.charges >= 1,
    )
    expect(summary.charges).toBe(1)
    expect(summary.charged).toBe(Math.round(product.price * 100))
  })
})

describe('smoke: the console', () => {
  it('when the console is asked for, then the gateway serves its page and its assets (the build serves its own copy)', async () => {
    const page = await fetch(`${client.gatewayUrl}/console/`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const script = /<script[^>]+src="([^"]+)"/.exec(html)?.[1]
    expect(script, html).toMatch(/^\/console\/assets\//)
    const asset = await fetch(`${client.gatewayUrl}${script}`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get('content-type')).toMatch(/javascript/)
    await asset.arrayBuffer()
  })
})
