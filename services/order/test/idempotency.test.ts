// Placing an order under an Idempotency-Key, on a real database: a retry answers the order the key placed (one order,
// one order.placed, however many requests and however concurrent), another body under the key is refused, the key is
// the customer's, and a malformed key is a 400 that places nothing — over inject and, for what a client library
// would never send, a raw socket.
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { ProductSummary } from '@meridian/contracts'
import { legacyRequestFingerprint } from '@meridian/service-kit'
import { asAdmin, asUser, expectErrorEnvelope, rawJsonPost, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildOrderTestApp, type OrderTestApp } from './support/app.ts'
import { type InventoryStandIn, startInventoryStandIn } from './support/inventory-stand-in.ts'
import { testAddress } from './support/place.ts'

const mug: ProductSummary = { id: randomUUID(), name: 'Blue mug', price: 19.99, available: 10, active: true }

let inventory: InventoryStandIn
let order: OrderTestApp
let port = 0

beforeAll(async () => {
  inventory = await startInventoryStandIn([mug])
  order = await buildOrderTestApp({ ...tokenEnv, INVENTORY_SERVICE_NAME: inventory.name })
  await order.app.listen({ host: '127.0.0.1', port: 0 })
  port = (order.app.server.address() as AddressInfo).port
})

afterAll(async () => {
  await order?.close()
  await inventory?.close()
})

type Headers = Record<string, string>

const orderBody = (customerId: string, quantity = 2) => ({
  customerId,
  items: [{ productId: mug.id, quantity, price: 19.99 }],
  shippingAddress: testAddress,
  payment: { token: 'tok_test_visa' },
})

const place = (body: unknown, headers: Headers, url = '/api/v1/orders') =>
  order.app.inject({ method: 'POST', url, payload: body as object, headers })

const keyed = (customerId: string, key: string): Headers => ({
  ...asUser(customerId),
  'idempotency-key': key,
})

/** The customer's orders, and the order.placed records written for them. */
async function writtenFor(customerId: string): Promise<{ orders: string[]; placedEvents: number }> {
  const rows = await order.sql<{ id: string }[]>`select id from orders where customer_id = ${customerId}`
  const [events] = await order.sql<{ n: number }[]>`
    select count(*)::int as n from outbox
    where event_type = 'order.placed' and aggregate_id = any(${order.sql.array(rows.map((row) => row.id))})`
  return { orders: rows.map((row) => row.id), placedEvents: events?.n ?? 0 }
}

describe('placing an order with an Idempotency-Key', () => {
  it('when the first request comes with a key, then 201 with Location as without one, and the key is kept with the order', async () => {
    const customerId = randomUUID()
    const key = `order-${randomUUID()}`
    const answer = await place(orderBody(customerId), keyed(customerId, key))
    expect(answer.statusCode).toBe(201)
    const placed = answer.json()
    expect(placed).toEqual({
      orderId: expect.any(String),
      status: 'placed',
      total: 39.98,
      _links: {
        self: { href: `/api/v1/orders/${placed.orderId}`, method: 'GET' },
        cancel: { href: `/api/v1/orders/${placed.orderId}/cancel`, method: 'POST' },
      },
    })
    expect(answer.headers.location).toBe(`/api/v1/orders/${placed.orderId}`)
    expect(answer.headers['idempotent-replayed']).toBeUndefined()
    const [row] = await order.sql<{ idempotencyKey: string; requestHash: string }[]>`
      select idempotency_key, request_hash from orders where id = ${placed.orderId}`
    expect(row?.idempotencyKey).toBe(key)
    // the request is kept as its fingerprint only, never its token, keyed by the server's IDEMPOTENCY_SECRET: what
    // the row holds (customer, key) no longer gives it, as a252e60's HMAC did, so a database copy cannot test guesses
    expect(row?.requestHash).toMatch(/^v2:[0-9a-f]{64}$/)
    const body = { ...orderBody(customerId), customerId }
    expect(row?.requestHash).not.toContain(legacyRequestFingerprint('meridian-order', customerId, key, body))
    expect(await writtenFor(customerId)).toEqual({ orders: [placed.orderId], placedEvents: 1 })
  })

  it('when the same key and body come again, then 201 with the same order, Location and body, and no second order or order.placed', async () => {
    const customerId = randomUUID()
    const key = randomUUID()
    const first = await place(orderBody(customerId), keyed(customerId, key))
    expect(first.statusCode).toBe(201)
    const lookups = inventory.lookups.length
    // the body's keys in another order are the same request
    const { payment, shippingAddress, items, customerId: customer } = orderBody(customerId)
    const again = await place(
      { payment, shippingAddress, items, customerId: customer },
      keyed(customerId, key),
    )
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(again.headers.location).toBe(first.headers.location)
    // a replay is answered from the order: nothing was priced again
    expect(inventory.lookups.length).toBe(lookups)
    expect(await writtenFor(customerId)).toEqual({ orders: [first.json().orderId], placedEvents: 1 })
  })

  it('when an order was placed before IDEMPOTENCY_SECRET (an unprefixed fingerprint), then its retry still replays it and another body is 422', async () => {
    const customerId = randomUUID()
    const key = randomUUID()
    const first = await place(orderBody(customerId), keyed(customerId, key))
    expect(first.statusCode).toBe(201)
    const legacy = legacyRequestFingerprint('meridian-order', customerId, key, {
      ...orderBody(customerId),
      customerId,
    })
    await order.sql`update orders set request_hash = ${legacy} where id = ${first.json().orderId}`
    const again = await place(orderBody(customerId), keyed(customerId, key))
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    const other = await place(orderBody(customerId, 3), keyed(customerId, key))
    expectErrorEnvelope(other, 422, 'VALIDATION_ERROR')
    expect(await writtenFor(customerId)).toEqual({ orders: [first.json().orderId], placedEvents: 1 })
  })

  it('when the order moved on before the retry, then the replay still answers the first answer (placed), its link the order now', async () => {
    const customerId = randomUUID()
    const key = randomUUID()
    const first = await place(orderBody(customerId), keyed(customerId, key))
    const { orderId } = first.json()
    const cancelled = await order.app.inject({
      method: 'POST',
      url: `/api/v1/orders/${orderId}/cancel`,
      headers: asUser(customerId),
    })
    expect(cancelled.statusCode).toBe(202)
    const again = await place(orderBody(customerId), keyed(customerId, key))
    expect(again.statusCode).toBe(201)
    expect(again.json()).toEqual(first.json())
    const current = await order.app.inject({
      method: 'GET',
      url: again.headers.location as string,
      headers: asUser(customerId),
    })
    expect(current.json()).toMatchObject({ id: orderId, status: 'cancelling' })
  })

  it('when 20 identical requests with one key come at once, then one order is placed and all 20 answer 201 with it', async () => {
    const customerId = randomUUID()
    const key = randomUUID()
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => place(orderBody(customerId), keyed(customerId, key))),
    )
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(20).fill(201))
    const orderIds = new Set(answers.map((answer) => answer.json().orderId))
    expect(orderIds.size).toBe(1)
    expect(new Set(answers.map((answer) => answer.headers.location)).size).toBe(1)
    expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === undefined)).toHaveLength(1)
    const written = await writtenFor(customerId)
    expect(written).toEqual({ orders: [...orderIds], placedEvents: 1 })
    const sagas = await order.sql`select 1 from sagas where order_id = ${written.orders[0] ?? ''}`
    expect(sagas).toHaveLength(1)
  })

  it('when the same key comes with another body, then 422 naming Idempotency-Key and nothing changes', async () => {
    const customerId = randomUUID()
    const key = randomUUID()
    const first = await place(orderBody(customerId), keyed(customerId, key))
    expect(first.statusCode).toBe(201)
    const other = await place(orderBody(customerId, 3), keyed(customerId, key))
    const error = expectErrorEnvelope(other, 422, 'VALIDATION_ERROR')
    expect(error.message).toMatch(/Idempotency-Key was already used/)
    expect(error.details).toEqual([
      { field: 'Idempotency-Key', message: 'was already used with a different request body' },
    ])
    // through the user's route, the same key with a body naming another product quantity: refused the same way
    const { customerId: _customer, ...userBody } = orderBody(customerId, 5)
    expectErrorEnvelope(
      await place(userBody, keyed(customerId, key), `/api/v1/users/${customerId}/orders`),
      422,
      'VALIDATION_ERROR',
    )
    expect(await writtenFor(customerId)).toEqual({ orders: [first.json().orderId], placedEvents: 1 })
    const [row] = await order.sql`select status, total_cents from orders where id = ${first.json().orderId}`
    expect(row).toEqual({ status: 'placed', totalCents: '3998' })
  })

  it('when two customers use the same key, then each gets an order of their own', async () => {
    const key = randomUUID()
    const [alice, bob] = [randomUUID(), randomUUID()]
    const forAlice = await place(orderBody(alice), keyed(alice, key))
    const forBob = await place(orderBody(bob), keyed(bob, key))
    expect([forAlice.statusCode, forBob.statusCode]).toEqual([201, 201])
    expect(forAlice.json().orderId).not.toBe(forBob.json().orderId)
    expect((await writtenFor(alice)).orders).toEqual([forAlice.json().orderId])
    expect((await writtenFor(bob)).orders).toEqual([forBob.json().orderId])
  })

  it("when the key is the customer's, then POST /users/{userId}/orders and an admin placing for them replay the same order", async () => {
    const customerId = randomUUID()
    const key = randomUUID()
    const { customerId: _customer, ...userBody } = orderBody(customerId)
    const first = await place(userBody, keyed(customerId, key), `/api/v1/users/${customerId}/orders`)
    expect(first.statusCode).toBe(201)
    const byPostOrders = await place(orderBody(customerId), keyed(customerId, key), '/api/orders')
    expect(byPostOrders.statusCode).toBe(201)
    expect(byPostOrders.json()).toEqual(first.json())
    const byAdmin = await place(orderBody(customerId), { ...asAdmin(), 'idempotency-key': key })
    expect(byAdmin.statusCode).toBe(201)
    expect(byAdmin.json()).toEqual(first.json())
    expect(await writtenFor(customerId)).toEqual({ orders: [first.json().orderId], placedEvents: 1 })
  })

  it('when the key comes from a customer placing for another, then 403 and the key places nothing', async () => {
    const customerId = randomUUID()
    const key = randomUUID()
    expectErrorEnvelope(await place(orderBody(customerId), keyed(randomUUID(), key)), 403, 'FORBIDDEN')
    expect(await writtenFor(customerId)).toEqual({ orders: [], placedEvents: 0 })
    // the key is still free for the customer
    expect((await place(orderBody(customerId), keyed(customerId, key))).headers['idempotent-replayed']).toBe(
      undefined,
    )
  })

  it('when the items are refused (422), then nothing is kept with the key and the corrected request places the order', async () => {
    const customerId = randomUUID()
    const key = randomUUID()
    const wrongPrice = { ...orderBody(customerId), items: [{ productId: mug.id, quantity: 2, price: 18 }] }
    expectErrorEnvelope(await place(wrongPrice, keyed(customerId, key)), 422, 'VALIDATION_ERROR')
    expect(await writtenFor(customerId)).toEqual({ orders: [], placedEvents: 0 })
    const corrected = await place(orderBody(customerId), keyed(customerId, key))
    expect(corrected.statusCode).toBe(201)
    expect(corrected.headers['idempotent-replayed']).toBeUndefined()
  })
})

describe('a malformed Idempotency-Key', () => {
  const malformed = (customerId: string, value: string) =>
    rawJsonPost(port, '/api/v1/orders', orderBody(customerId), [
      ['Authorization', asUser(customerId).authorization ?? ''],
      ['Idempotency-Key', value],
    ])

  it('when it is empty or 256 characters long, then 400 VALIDATION_ERROR naming it and nothing is placed', async () => {
    const customerId = randomUUID()
    for (const value of ['', 'k'.repeat(256)]) {
      const error = expectErrorEnvelope(
        await place(orderBody(customerId), keyed(customerId, value)),
        400,
        'VALIDATION_ERROR',
        { context: `${value.length} characters` },
      )
      expect(error.details).toEqual([
        { field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' },
      ])
    }
    // the same on the user's route, over a socket as a client sends it
    const empty = await rawJsonPost(port, `/api/v1/users/${customerId}/orders`, orderBody(customerId), [
      ['Authorization', asUser(customerId).authorization ?? ''],
      ['Idempotency-Key', ''],
    ])
    expectErrorEnvelope(empty, 400, 'VALIDATION_ERROR')
    expect(await writtenFor(customerId)).toEqual({ orders: [], placedEvents: 0 })
    // 255 characters is a key
    expect((await place(orderBody(customerId), keyed(customerId, 'k'.repeat(255)))).statusCode).toBe(201)
  })

  it('when it holds a control character or non-ASCII, then 400 and nothing is placed', async () => {
    const customerId = randomUUID()
    // a tab passes HTTP's parser inside a value; other control characters the parser itself refuses (400 too)
    for (const value of ['before\tafter', 'bell\u0007', 'delete\u007f', 'clé-ü', 'emoji-🙂']) {
      const answer = await malformed(customerId, value)
      expect(answer.statusCode, JSON.stringify(value)).toBe(400)
    }
    for (const value of ['before\tafter', 'clé-ü', 'emoji-🙂']) {
      expectErrorEnvelope(await malformed(customerId, value), 400, 'VALIDATION_ERROR', {
        context: JSON.stringify(value),
      })
    }
    expect(await writtenFor(customerId)).toEqual({ orders: [], placedEvents: 0 })
  })

  it('when it is sent on two lines, then 400 "sent once" and nothing is placed under either key or their join', async () => {
    const customerId = randomUUID()
    // Node joins the two lines into "first, second": the raw head, not the joined value, decides
    const answer = await rawJsonPost(port, '/api/v1/orders', orderBody(customerId), [
      ['Authorization', asUser(customerId).authorization ?? ''],
      ['Idempotency-Key', 'first'],
      ['idempotency-key', 'second'],
    ])
    const error = expectErrorEnvelope(answer, 400, 'VALIDATION_ERROR')
    expect(error.details).toEqual([{ field: 'Idempotency-Key', message: 'must be sent once' }])
    expect(await writtenFor(customerId)).toEqual({ orders: [], placedEvents: 0 })
  })

  it('when no credentials come with it, then 401 first', async () => {
    expectErrorEnvelope(
      await place(orderBody(randomUUID()), { 'idempotency-key': 'x'.repeat(300) }),
      401,
      'UNAUTHORIZED',
    )
  })
})

describe('the OpenAPI document', () => {
  it('when /docs/json is read, then both ways of placing declare the optional Idempotency-Key header and the 400 in the envelope', async () => {
    const document = (await order.app.inject({ method: 'GET', url: '/docs/json' })).json()
    for (const path of ['/api/v1/orders', '/api/v1/users/{userId}/orders']) {
      const operation = document.paths[path].post
      const header = operation.parameters.find(
        (parameter: { in: string; name: string }) =>
          parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key',
      )
      expect(header, path).toMatchObject({
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      })
      expect(Object.keys(operation.responses), path).toEqual(expect.arrayContaining(['201', '400', '422']))
      expect(operation.responses['400'], path).toMatchObject({
        description: expect.stringContaining('Idempotency-Key'),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      })
    }
  })
})
