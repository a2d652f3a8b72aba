// Orders over HTTP on a real database, real Consul and Redis: placing (priced from the catalogue, integer cents),
// reading with _links, a user's list, cancelling, the outbox records, the /api aliases.
// Inventory is a stand-in (test/support/inventory-stand-in.ts): a small HTTP server replacing another Meridian
// service, registered in the real Consul under a unique name that the order app is told to discover. No engine is
// replaced.
import { randomUUID } from 'node:crypto'
import type { ProductSummary } from '@meridian/contracts'
import {
  asAdmin,
  asUser,
  expectErrorEnvelope,
  testServiceCredential,
  tokenEnv,
  uniqueName,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildOrderTestApp, type OrderTestApp } from './support/app.ts'
import { type InventoryStandIn, startInventoryStandIn } from './support/inventory-stand-in.ts'

const mug: ProductSummary = { id: randomUUID(), name: 'Blue mug', price: 19.99, available: 10, active: true }
const pencil: ProductSummary = { id: randomUUID(), name: 'Pencil', price: 0.1, available: 500, active: true }
const retired: ProductSummary = { id: randomUUID(), name: 'Old lamp', price: 5, available: 0, active: false }

let inventory: InventoryStandIn
let order: OrderTestApp

beforeAll(async () => {
  inventory = await startInventoryStandIn([mug, pencil, retired])
  order = await buildOrderTestApp({ ...tokenEnv, INVENTORY_SERVICE_NAME: inventory.name })
})

afterAll(async () => {
  await order?.close()
  await inventory?.close()
})

type Headers = Record<string, string>
const post = (url: string, payload: unknown, headers: Headers) =>
  order.app.inject({ method: 'POST', url, payload: payload as object, headers })
const postEmpty = (url: string, headers: Headers) => order.app.inject({ method: 'POST', url, headers })
const get = (url: string, headers: Headers) => order.app.inject({ method: 'GET', url, headers })

const address = { street: '1 Main Street', city: 'Springfield', zip: '12345' }
const orderBody = (
  customerId: string,
  items: unknown[] = [{ productId: mug.id, quantity: 3, price: 19.99 }],
) => ({
  customerId,
  items,
  shippingAddress: address,
})

async function outboxOf(orderId: string) {
  return order.sql<{ eventType: string; payload: { type: string; data: Record<string, unknown> } }[]>`
    select event_type, payload from outbox where aggregate_id = ${orderId} order by id`
}

async function outboxCount(): Promise<number> {
  const [row] = await order.sql<{ n: number }[]>`select count(*)::int as n from outbox`
  return row?.n ?? 0
}

async function placeFor(customerId: string, items?: unknown[]): Promise<string> {
  const answer = await post('/api/v1/orders', orderBody(customerId, items), asUser(customerId))
  expect(answer.statusCode).toBe(201)
  return answer.json().orderId as string
}

describe('POST /api/v1/orders', () => {
  it('when the customer places an order, then 201 with Location and the exact total; order, items and order.placed are written together', async () => {
    const customerId = randomUUID()
    const body = { ...orderBody(customerId), payment: { token: 'tok_visa_4242' } }
    const answer = await post('/api/v1/orders', body, asUser(customerId))
    expect(answer.statusCode).toBe(201)
    const placed = answer.json()
    expect(placed).toEqual({
      orderId: expect.any(String),
      status: 'placed',
      total: 59.97,
      _links: {
        self: { href: `/api/v1/orders/${placed.orderId}`, method: 'GET' },
        cancel: { href: `/api/v1/orders/${placed.orderId}/cancel`, method: 'POST' },
      },
    })
    expect(answer.headers.location).toBe(`/api/v1/orders/${placed.orderId}`)

    const [row] = await order.sql<
      {
        customerId: string
        status: string
        totalCents: string
        paymentToken: string
        shippingAddress: unknown
      }[]
    >`select customer_id, status, total_cents, payment_token, shipping_address from orders where id = ${placed.orderId}`
    expect(row).toEqual({
      customerId,
      status: 'placed',
      totalCents: '5997',
      paymentToken: 'tok_visa_4242',
      shippingAddress: address,
    })
    const items = await order.sql`
      select line, product_id, name, quantity, price_cents from order_items where order_id = ${placed.orderId}`
    expect([...items]).toEqual([
      { line: 0, productId: mug.id, name: 'Blue mug', quantity: 3, priceCents: '1999' },
    ])

    const events = await outboxOf(placed.orderId)
    expect(events.map((event) => event.eventType)).toEqual(['order.placed'])
    expect(events[0]?.payload).toMatchObject({ type: 'order.placed', source: 'order' })
    expect(events[0]?.payload.data).toEqual({
      orderId: placed.orderId,
      customerId,
      total: 59.97,
      items: [{ productId: mug.id, quantity: 3, price: 19.99, name: 'Blue mug' }],
      customerEmail: expect.stringContaining('@example.com'),
      status: 'placed',
      shippingAddress: address,
      // the payment step charges with the provider token; no card data ever reaches an order or an event
      payment: { token: 'tok_visa_4242' },
    })
  })

  it('when amounts would not add up as floats (3 x 0.10 + 19.99), then the total is exact', async () => {
    const customerId = randomUUID()
    const answer = await post(
      '/api/v1/orders',
      orderBody(customerId, [
        { productId: pencil.id, quantity: 3, price: 0.1 },
        { productId: mug.id, quantity: 1, price: 19.99 },
      ]),
      asUser(customerId),
    )
    expect(answer.statusCode).toBe(201)
    expect(answer.json().total).toBe(20.29)
    expect(answer.body).toContain('"total":20.29')
  })

  it('when a user places an order for another customer, then 403 and nothing is written; an admin may', async () => {
    const customerId = randomUUID()
    const before = await outboxCount()
    expectErrorEnvelope(await post('/api/v1/orders', orderBody(customerId), asUser()), 403, 'FORBIDDEN')
    expect(await order.sql`select 1 from orders where customer_id = ${customerId}`).toHaveLength(0)
    expect(await outboxCount()).toBe(before)

    const byAdmin = await post('/api/v1/orders', orderBody(customerId), asAdmin())
    expect(byAdmin.statusCode).toBe(201)
    const [row] = await order.sql`select customer_id from orders where id = ${byAdmin.json().orderId}`
    expect(row).toEqual({ customerId })
  })

  it('when no credentials are sent, then 401 (before any validation)', async () => {
    expectErrorEnvelope(await post('/api/v1/orders', orderBody(randomUUID()), {}), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(await post('/api/v1/orders', { nonsense: true }, {}), 401, 'UNAUTHORIZED')
  })

  it('when items are unknown, mispriced, inactive or priced with 3 decimals, then 422 with one detail per bad item and nothing written', async () => {
    const customerId = randomUUID()
    const before = await outboxCount()
    const unknown = randomUUID()
    const error = expectErrorEnvelope(
      await post(
        '/api/v1/orders',
        orderBody(customerId, [
          { productId: mug.id, quantity: 1, price: 19.99 },
          { productId: unknown, quantity: 1, price: 1 },
          { productId: mug.id, quantity: 2, price: 18.99 },
          { productId: retired.id, quantity: 1, price: 5 },
          { productId: pencil.id, quantity: 1, price: 0.105 },
        ]),
        asUser(customerId),
      ),
      422,
      'VALIDATION_ERROR',
    )
    expect(error.details).toEqual([
      { field: 'items.1.productId', message: 'no such product', received: unknown },
      { field: 'items.2.price', message: 'must be the catalogue price 19.99', received: '18.99' },
      { field: 'items.3.productId', message: 'the product is not for sale (inactive)', received: retired.id },
      { field: 'items.4.price', message: 'must be an amount with at most two decimals', received: '0.105' },
    ])
    expect(await order.sql`select 1 from orders where customer_id = ${customerId}`).toHaveLength(0)
    expect(await outboxCount()).toBe(before)
    // the three-decimals item was never asked about
    expect(inventory.lookups.at(-1)).toEqual([mug.id, unknown, retired.id])
  })

  it('when a quantity is 0 or above 1000, or there are no items, then 422 naming the field', async () => {
    const customerId = randomUUID()
    for (const quantity of [0, 1001, 1.5]) {
      const error = expectErrorEnvelope(
        await post(
          '/api/v1/orders',
          orderBody(customerId, [{ productId: mug.id, quantity, price: 19.99 }]),
          asUser(customerId),
        ),
        422,
        'VALIDATION_ERROR',
      )
      expect(error.details).toEqual([expect.objectContaining({ field: 'items.0.quantity' })])
    }
    const empty = expectErrorEnvelope(
      await post('/api/v1/orders', orderBody(customerId, []), asUser(customerId)),
      422,
      'VALIDATION_ERROR',
    )
    expect(empty.details).toEqual([expect.objectContaining({ field: 'items' })])
    expect(await order.sql`select 1 from orders where customer_id = ${customerId}`).toHaveLength(0)
  })

  it('when placed through the /api alias, then the same 201', async () => {
    const customerId = randomUUID()
    const answer = await post('/api/orders', orderBody(customerId), asUser(customerId))
    expect(answer.statusCode).toBe(201)
    expect(answer.headers.location).toBe(`/api/v1/orders/${answer.json().orderId}`)
  })
})

describe("inventory's lookup and the service credential", () => {
  let misconfigured: OrderTestApp
  beforeAll(async () => {
    misconfigured = await buildOrderTestApp({
      ...tokenEnv,
      INVENTORY_SERVICE_NAME: inventory.name,
      SERVICE_CREDENTIAL: 'a-credential-inventory-does-not-know-0123456789',
    })
  })
  afterAll(async () => {
    await misconfigured?.close()
  })

  it('when an order is priced, then order asks inventory with the configured service credential', async () => {
    const sent = inventory.credentials.length
    await placeFor(randomUUID())
    expect(inventory.credentials.slice(sent)).toEqual([testServiceCredential])
  })

  it("when order's credential is not inventory's, then placing is 502 BAD_GATEWAY and nothing is written", async () => {
    const customerId = randomUUID()
    const answer = await misconfigured.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      payload: orderBody(customerId),
      headers: asUser(customerId),
    })
    expectErrorEnvelope(answer, 502, 'BAD_GATEWAY')
    expect(inventory.credentials.at(-1)).toBe('a-credential-inventory-does-not-know-0123456789')
    expect(await misconfigured.sql`select 1 from orders`).toHaveLength(0)
    expect(await misconfigured.sql`select 1 from outbox`).toHaveLength(0)
  })
})

describe('when inventory has no healthy instance', () => {
  let lonely: OrderTestApp
  beforeAll(async () => {
    lonely = await buildOrderTestApp({ ...tokenEnv, INVENTORY_SERVICE_NAME: uniqueName('inventory-absent') })
  })
  afterAll(async () => {
    await lonely?.close()
  })

  it('then placing an order is 503 SERVICE_UNAVAILABLE and nothing is written', async () => {
    const customerId = randomUUID()
    const answer = await lonely.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      payload: orderBody(customerId),
      headers: asUser(customerId),
    })
    expectErrorEnvelope(answer, 503, 'SERVICE_UNAVAILABLE')
    expect(await lonely.sql`select 1 from orders`).toHaveLength(0)
    expect(await lonely.sql`select 1 from outbox`).toHaveLength(0)
  })
})

describe('when the inventory instance Consul lists refuses connections', () => {
  let silent: InventoryStandIn
  let stranded: OrderTestApp
  beforeAll(async () => {
    silent = await startInventoryStandIn([mug])
    await silent.stopAnswering()
    stranded = await buildOrderTestApp({ ...tokenEnv, INVENTORY_SERVICE_NAME: silent.name })
  })
  afterAll(async () => {
    await stranded?.close()
    await silent?.close()
  })

  it('then placing an order is 503 SERVICE_UNAVAILABLE (naming inventory, not its address) and nothing is written', async () => {
    const customerId = randomUUID()
    const answer = await stranded.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      payload: orderBody(customerId),
      headers: asUser(customerId),
    })
    const error = expectErrorEnvelope(answer, 503, 'SERVICE_UNAVAILABLE')
    expect(error.message).toBe('inventory is unavailable')
    expect(await stranded.sql`select 1 from orders`).toHaveLength(0)
  })
})

describe('/users/{userId}/orders', () => {
  it('when the user places an order on their path, then 201 with Location (also under /api/v1 and /api)', async () => {
    const userId = randomUUID()
    const { customerId: _omitted, ...body } = orderBody(userId)
    for (const path of [
      `/users/${userId}/orders`,
      `/api/v1/users/${userId}/orders`,
      `/api/users/${userId}/orders`,
    ]) {
      const answer = await post(path, body, asUser(userId))
      expect(answer.statusCode).toBe(201)
      const { orderId, total, status } = answer.json()
      expect({ total, status }).toEqual({ total: 59.97, status: 'placed' })
      expect(answer.headers.location).toBe(`/api/v1/orders/${orderId}`)
    }
    const rows = await order.sql`select customer_id from orders where customer_id = ${userId}`
    expect(rows).toHaveLength(3)
  })

  it("when the body's customerId is not the path's, then 422; another user's path is 403", async () => {
    const userId = randomUUID()
    const mismatch = expectErrorEnvelope(
      await post(`/users/${userId}/orders`, orderBody(randomUUID()), asUser(userId)),
      422,
      'VALIDATION_ERROR',
    )
    expect(mismatch.details).toEqual([expect.objectContaining({ field: 'customerId' })])
    expectErrorEnvelope(await post(`/users/${userId}/orders`, orderBody(userId), asUser()), 403, 'FORBIDDEN')
    expect(await order.sql`select 1 from orders where customer_id = ${userId}`).toHaveLength(0)
  })

  it('when the user lists their orders, then pages of full orders, sorted and filtered by status', async () => {
    const userId = randomUUID()
    const first = await placeFor(userId, [{ productId: mug.id, quantity: 1, price: 19.99 }])
    const second = await placeFor(userId, [{ productId: pencil.id, quantity: 1, price: 0.1 }])
    const third = await placeFor(userId, [{ productId: mug.id, quantity: 2, price: 19.99 }])
    await placeFor(randomUUID()) // someone else's

    const page1 = await get(`/users/${userId}/orders?limit=2`, asUser(userId))
    expect(page1.statusCode).toBe(200)
    const envelope = page1.json()
    expect(envelope.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 })
    expect(envelope.data.map((o: { id: string }) => o.id)).toEqual([third, second])
    expect(envelope.data[0]).toMatchObject({
      customerId: userId,
      status: 'placed',
      total: 39.98,
      items: [{ productId: mug.id, quantity: 2, price: 19.99, name: 'Blue mug' }],
      shippingAddress: address,
      _links: { self: { href: `/api/v1/orders/${third}`, method: 'GET' } },
    })
    expect(envelope.links.next).toBe(`/users/${userId}/orders?page=2&limit=2`)

    const page2 = (await get(`/api/v1/users/${userId}/orders?page=2&limit=2`, asUser(userId))).json()
    expect(page2.data.map((o: { id: string }) => o.id)).toEqual([first])

    const byTotal = (await get(`/api/users/${userId}/orders?sort=total:asc`, asUser(userId))).json()
    expect(byTotal.data.map((o: { total: number }) => o.total)).toEqual([0.1, 19.99, 39.98])

    expect((await postEmpty(`/api/v1/orders/${second}/cancel`, asUser(userId))).statusCode).toBe(202)
    const cancelling = (await get(`/users/${userId}/orders?status=cancelling`, asUser(userId))).json()
    expect(cancelling.data.map((o: { id: string }) => o.id)).toEqual([second])
    expect(cancelling.meta.total).toBe(1)

    expect((await get(`/users/${userId}/orders`, asAdmin())).json().meta.total).toBe(3)
    expectErrorEnvelope(await get(`/users/${userId}/orders`, asUser()), 403, 'FORBIDDEN')
    expectErrorEnvelope(await get(`/users/${userId}/orders`, {}), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(
      await get(`/users/${userId}/orders?sort=name:asc`, asUser(userId)),
      422,
      'VALIDATION_ERROR',
    )
  })

  it('when the user reads one of their orders, then 200; an order that is not theirs is 404', async () => {
    const userId = randomUUID()
    const mine = await placeFor(userId)
    const theirs = await placeFor(randomUUID())
    const answer = await get(`/users/${userId}/orders/${mine}`, asUser(userId))
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toMatchObject({ id: mine, customerId: userId, total: 59.97 })
    expectErrorEnvelope(
      await get(`/api/v1/users/${userId}/orders/${theirs}`, asUser(userId)),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(
      await get(`/users/${userId}/orders/${randomUUID()}`, asUser(userId)),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(await get(`/users/${userId}/orders/${mine}`, asUser()), 403, 'FORBIDDEN')
  })
})

describe('GET /orders/{id}', () => {
  it('when the customer reads the order, then its full details with self and cancel links (root, /api/v1, /api)', async () => {
    const customerId = randomUUID()
    const id = await placeFor(customerId)
    for (const path of [`/orders/${id}`, `/api/v1/orders/${id}`, `/api/orders/${id}`]) {
      const answer = await get(path, asUser(customerId))
      expect(answer.statusCode).toBe(200)
      expect(answer.json()).toEqual({
        id,
        customerId,
        status: 'placed',
        total: 59.97,
        items: [{ productId: mug.id, quantity: 3, price: 19.99, name: 'Blue mug' }],
        shippingAddress: address,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        _links: {
          self: { href: `/api/v1/orders/${id}`, method: 'GET' },
          cancel: { href: `/api/v1/orders/${id}/cancel`, method: 'POST' },
        },
      })
    }
  })

  it('when another customer reads it, then 404 (its existence is not told); an admin reads it; unknown is 404; no credentials 401', async () => {
    const id = await placeFor(randomUUID())
    expectErrorEnvelope(await get(`/api/v1/orders/${id}`, asUser()), 404, 'NOT_FOUND')
    expect((await get(`/api/v1/orders/${id}`, asAdmin())).statusCode).toBe(200)
    expectErrorEnvelope(await get(`/api/v1/orders/${randomUUID()}`, asAdmin()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await get(`/api/v1/orders/${id}`, {}), 401, 'UNAUTHORIZED')
  })
})

describe('POST /orders/{id}/cancel', () => {
  it('when the customer cancels, then 202 cancelling with one order.cancelled and the first compensation; again, 202 without a second event; the cancel link is gone', async () => {
    const customerId = randomUUID()
    const id = await placeFor(customerId)
    const answer = await postEmpty(`/orders/${id}/cancel`, asUser(customerId))
    expect(answer.statusCode).toBe(202)
    expect(answer.json()).toEqual({
      orderId: id,
      status: 'cancelling',
      _links: { self: { href: `/api/v1/orders/${id}`, method: 'GET' } },
    })
    const again = await postEmpty(`/api/v1/orders/${id}/cancel`, asUser(customerId))
    expect(again.statusCode).toBe(202)
    expect(again.json().status).toBe('cancelling')

    const events = await outboxOf(id)
    // the saga's compensations in reverse order: the stock first (the refund follows inventory.released)
    expect(events.map((event) => event.eventType)).toEqual([
      'order.placed',
      'order.cancelled',
      'inventory.release_requested',
    ])
    expect(events[1]?.payload.data).toEqual({ orderId: id, reason: 'cancelled by the customer' })
    expect(events[2]?.payload.data).toEqual({ orderId: id, reason: 'cancelled by the customer', attempt: 1 })

    const read = (await get(`/api/v1/orders/${id}`, asUser(customerId))).json()
    expect(read.status).toBe('cancelling')
    expect(read._links).toEqual({ self: { href: `/api/v1/orders/${id}`, method: 'GET' } })
  })

  it('when the order was shipped, then 409 CONFLICT and no event; payment_failed can still be cancelled (via /api)', async () => {
    const customerId = randomUUID()
    const shipped = await placeFor(customerId)
    await order.sql`update orders set status = 'shipped' where id = ${shipped}`
    expectErrorEnvelope(
      await postEmpty(`/api/v1/orders/${shipped}/cancel`, asUser(customerId)),
      409,
      'CONFLICT',
    )
    expect((await outboxOf(shipped)).map((event) => event.eventType)).toEqual(['order.placed'])
    const read = (await get(`/api/v1/orders/${shipped}`, asUser(customerId))).json()
    expect(read._links.cancel).toBeUndefined()

    const failed = await placeFor(customerId)
    await order.sql`update orders set status = 'payment_failed' where id = ${failed}`
    expect((await postEmpty(`/api/orders/${failed}/cancel`, asUser(customerId))).statusCode).toBe(202)
  })

  it('when another customer cancels, then 404 and nothing changes; an admin may cancel', async () => {
    const id = await placeFor(randomUUID())
    expectErrorEnvelope(await postEmpty(`/api/v1/orders/${id}/cancel`, asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await postEmpty(`/api/v1/orders/${randomUUID()}/cancel`, asAdmin()), 404, 'NOT_FOUND')
    const [row] = await order.sql`select status from orders where id = ${id}`
    expect(row).toEqual({ status: 'placed' })
    expect((await postEmpty(`/api/v1/orders/${id}/cancel`, asAdmin())).statusCode).toBe(202)
  })
})
