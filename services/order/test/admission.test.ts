// Back-pressure on new orders (ORDER_ADMISSION_TARGET_MS), on a real database, Consul and Redis: the orders in flight
// admitted are what the recent shipping rate carries in the target time, at least the minimum; a new order beyond
// them is 503 SERVICE_UNAVAILABLE with Retry-After in the error envelope, and writes nothing; a replay of an order
// placed before answers as ever; once the sagas move on (shipped), new orders are admitted again. Here nothing consumes
// the sagas' commands: they stay in flight until the test ships them.
import { randomUUID } from 'node:crypto'
import type { ProductSummary } from '@meridian/contracts'
import { asUser, eventually, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { admissionLimit } from '../src/domain/admission.ts'
import { buildOrderTestApp, type OrderTestApp } from './support/app.ts'
import { type InventoryStandIn, startInventoryStandIn } from './support/inventory-stand-in.ts'
import { testAddress } from './support/place.ts'

const mug: ProductSummary = { id: randomUUID(), name: 'Blue mug', price: 19.99, available: 100, active: true }

/** POST /api/v1/orders of one mug by the customer, under the Idempotency-Key when given. */
const placeMug = (app: OrderTestApp, customerId: string, idempotencyKey?: string) =>
  app.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    payload: {
      customerId,
      items: [{ productId: mug.id, quantity: 1, price: 19.99 }],
      shippingAddress: testAddress,
    },
    headers: { ...asUser(customerId), ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
  })

describe('the admission limit', () => {
  const settings = { targetMs: 500, minInFlight: 4, windowMs: 5000 }
  it('when the recent rate ships more in the target time than the minimum, then that many are admitted; else the minimum', () => {
    // 200 shipped in 5 s: 40/s, 20 in half a second
    expect(admissionLimit({ inFlight: 0, shippedInWindow: 200 }, settings)).toBe(20)
    expect(admissionLimit({ inFlight: 0, shippedInWindow: 10 }, settings)).toBe(4)
    expect(admissionLimit({ inFlight: 0, shippedInWindow: 0 }, settings)).toBe(4)
    // it grows with the rate: four times the rate, four times the orders in flight
    expect(admissionLimit({ inFlight: 0, shippedInWindow: 800 }, settings)).toBe(80)
  })
})

describe('ORDER_ADMISSION_TARGET_MS=500, at least 2 in flight', () => {
  let inventory: InventoryStandIn
  let app: OrderTestApp
  beforeAll(async () => {
    inventory = await startInventoryStandIn([mug])
    app = await buildOrderTestApp({
      ...tokenEnv,
      INVENTORY_SERVICE_NAME: inventory.name,
      ORDER_ADMISSION_TARGET_MS: '500',
      ORDER_ADMISSION_MIN_IN_FLIGHT: '2',
      // the load read every 50 ms
      ORDER_ADMISSION_WINDOW_MS: '1000',
    })
    await app.app.ready()
  })
  afterAll(async () => {
    await app?.close()
    await inventory?.close()
  })

  const customerId = randomUUID()
  const place = (idempotencyKey?: string) => placeMug(app, customerId, idempotencyKey)
  const ordersWritten = async () =>
    (
      await app.sql<{ n: number }[]>`select count(*)::int as n from orders where customer_id = ${customerId}`
    )[0]?.n
  const outboxRows = async () => (await app.sql<{ n: number }[]>`select count(*)::int as n from outbox`)[0]?.n
  const inFlight = async () =>
    (
      await app.sql<{ n: number }[]>`
        select count(*)::int as n from process_instances where type = 'order' and state = 'created'`
    )[0]?.n

  it('when the orders in flight reach the limit, then a new one is 503 with Retry-After and writes nothing; its replay and, once they ship, new ones are 201', async () => {
    expect((await place('first')).statusCode).toBe(201)
    expect((await place()).statusCode).toBe(201)
    // the admission reads the two in flight on its next round: a third is refused, however often it is asked
    let refused = await place()
    await eventually('a third order refused', async () => {
      if (refused.statusCode === 201) refused = await place()
      return refused.statusCode === 503
    })
    const before = { orders: await ordersWritten(), outbox: await outboxRows() }
    for (let i = 0; i < 3; i++) {
      const again = await place()
      const error = expectErrorEnvelope(again, 503, 'SERVICE_UNAVAILABLE')
      expect(error.message).toBe('Orders are arriving faster than they can be fulfilled: try again shortly')
      expect(again.headers['retry-after']).toBe('1')
      // shed on purpose: the gateway counts no failure against the instance
      expect(again.headers['x-meridian-load-shed']).toBe('orders')
    }
    expect({ orders: await ordersWritten(), outbox: await outboxRows() }).toEqual(before)
    // the first order's replay is no new order: it answers as before
    const replay = await place('first')
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')

    // the sagas move on: every order in flight ships, and new orders are admitted again
    await app.sql`update process_instances set state = 'shipped', step = null, updated_at = now() where type = 'order'`
    expect(await inFlight()).toBe(0)
    await eventually('a new order admitted', async () => (await place()).statusCode === 201)
    const metrics = await app.app.inject({ method: 'GET', url: '/metrics' })
    const counted = /^meridian_orders_refused_total(?:\{[^}]*\})? (\d+)$/m.exec(metrics.body)
    expect(Number(counted?.[1])).toBeGreaterThanOrEqual(4)
  })
})

describe('ORDER_ADMISSION_TARGET_MS unset', () => {
  it('when it is not set, then no order is refused for the queue: the admission is off', async () => {
    const inventory = await startInventoryStandIn([mug])
    const app = await buildOrderTestApp({ ...tokenEnv, INVENTORY_SERVICE_NAME: inventory.name })
    try {
      const customerId = randomUUID()
      for (let i = 0; i < 20; i++) {
        const answer = await placeMug(app, customerId)
        expect(answer.statusCode).toBe(201)
      }
    } finally {
      await app.close()
      await inventory.close()
    }
  })
})
