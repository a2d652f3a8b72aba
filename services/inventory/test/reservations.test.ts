// Reservations as the use cases apply them in a consumer's transaction: all lines or none, release, shipment,
// redelivery and the saga's repeated requests (always answered), a release that comes before the reservation, the
// outbox rows they write, and no overselling under concurrency. Real PostgreSQL.
import { randomUUID } from 'node:crypto'
import { type TransactionSql, transaction } from '@meridian/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildInventoryTestApp, type InventoryTestApp } from './support/app.ts'
import { createTestProduct, outboxOf, stockOf } from './support/products.ts'

let inventory: InventoryTestApp

beforeAll(async () => {
  inventory = await buildInventoryTestApp()
})

afterAll(async () => {
  await inventory?.close()
})

const inTransaction = <T>(work: (tx: TransactionSql) => Promise<T>) => transaction(inventory.sql, work)
const reserve = (
  orderId: string,
  items: { productId: string; quantity: number }[],
  customer: { customerId?: string; shippingAddress?: { street: string; city: string; zip: string } } = {},
) => inTransaction((tx) => inventory.reservations.reserveOrder({ orderId, items, ...customer }, tx))
const release = (orderId: string, reason = 'customer cancelled') =>
  inTransaction((tx) => inventory.reservations.releaseOrder({ orderId, reason }, tx))
const ship = (orderId: string) => inTransaction((tx) => inventory.reservations.shipOrder({ orderId }, tx))

const reservationOf = async (orderId: string) => {
  const [row] = await inventory.sql<{ id: string; status: string }[]>`
    select id, status from reservations where order_id = ${orderId}`
  return row
}
const movementsOf = (orderId: string) => inventory.sql`
  select product_id, delta_available, delta_reserved, reason from stock_movements
  where order_id = ${orderId} order by id`

describe('reserving a paid order', () => {
  it('when every line has stock, then all are reserved together, audited, and inventory.reserved is in the outbox', async () => {
    const mug = await createTestProduct(inventory, { stock: 5 })
    const cup = await createTestProduct(inventory, { stock: 2 })
    const orderId = randomUUID()
    const outcome = await reserve(orderId, [
      { productId: mug.id, quantity: 2 },
      { productId: cup.id, quantity: 2 },
      { productId: mug.id, quantity: 1 },
    ])
    expect(outcome).toMatchObject({ outcome: 'reserved' })
    expect(await stockOf(inventory, mug.id)).toEqual({ available: 2, reserved: 3 })
    expect(await stockOf(inventory, cup.id)).toEqual({ available: 0, reserved: 2 })

    const reservation = await reservationOf(orderId)
    expect(reservation?.status).toBe('held')
    const lines = await inventory.sql`
      select product_id, quantity from reservation_lines where reservation_id = ${reservation?.id ?? ''}`
    expect([...lines]).toEqual(
      expect.arrayContaining([
        { productId: mug.id, quantity: 3 },
        { productId: cup.id, quantity: 2 },
      ]),
    )
    expect(lines.length).toBe(2)
    expect([...(await movementsOf(orderId))]).toEqual(
      expect.arrayContaining([
        { productId: mug.id, deltaAvailable: -3, deltaReserved: 3, reason: 'reserved for order' },
        { productId: cup.id, deltaAvailable: -2, deltaReserved: 2, reason: 'reserved for order' },
      ]),
    )

    const outbox = await outboxOf(inventory, orderId)
    expect(outbox).toHaveLength(1)
    expect(outbox[0]).toMatchObject({ eventType: 'inventory.reserved', aggregateId: orderId })
    expect(outbox[0]?.payload).toMatchObject({ type: 'inventory.reserved', source: 'inventory' })
    expect(outbox[0]?.payload.data).toEqual({
      orderId,
      reservationId: reservation?.id,
      items: expect.arrayContaining([
        { productId: mug.id, quantity: 3 },
        { productId: cup.id, quantity: 2 },
      ]),
    })
  })

  it('when one line is short, then nothing is reserved and inventory.failed names the short line', async () => {
    const plenty = await createTestProduct(inventory, { stock: 10 })
    const scarce = await createTestProduct(inventory, { stock: 1 })
    const orderId = randomUUID()
    const outcome = await reserve(orderId, [
      { productId: plenty.id, quantity: 4 },
      { productId: scarce.id, quantity: 2 },
    ])
    expect(outcome).toEqual({
      outcome: 'failed',
      reason: 'insufficient stock',
      items: [{ productId: scarce.id, quantity: 2 }],
    })
    expect(await stockOf(inventory, plenty.id)).toEqual({ available: 10, reserved: 0 })
    expect(await stockOf(inventory, scarce.id)).toEqual({ available: 1, reserved: 0 })
    expect(await reservationOf(orderId)).toBeUndefined()
    expect((await movementsOf(orderId)).length).toBe(0)
    const outbox = await outboxOf(inventory, orderId)
    expect(outbox.map((row) => row.eventType)).toEqual(['inventory.failed'])
    expect(outbox[0]?.payload.data).toEqual({
      orderId,
      reason: 'insufficient stock',
      items: [{ productId: scarce.id, quantity: 2 }],
    })
  })

  it('when a product is unknown (or its id is not a uuid), then nothing is reserved and the failure is unknown product', async () => {
    const known = await createTestProduct(inventory, { stock: 10 })
    const missing = randomUUID()
    const orderId = randomUUID()
    const outcome = await reserve(orderId, [
      { productId: known.id, quantity: 1 },
      { productId: missing, quantity: 1 },
      { productId: 'sku-42', quantity: 1 },
    ])
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'unknown product' })
    expect(await stockOf(inventory, known.id)).toEqual({ available: 10, reserved: 0 })
    const [failed] = await outboxOf(inventory, orderId)
    expect(failed?.payload.data).toEqual({
      orderId,
      reason: 'unknown product',
      items: expect.arrayContaining([
        { productId: missing, quantity: 1 },
        { productId: 'sku-42', quantity: 1 },
      ]),
    })
    expect(failed?.payload.data.items).toHaveLength(2)
  })

  it('when a product is inactive, then it cannot be reserved (insufficient stock)', async () => {
    const inactive = await createTestProduct(inventory, { stock: 10, active: false })
    const orderId = randomUUID()
    expect(await reserve(orderId, [{ productId: inactive.id, quantity: 1 }])).toMatchObject({
      outcome: 'failed',
      reason: 'insufficient stock',
    })
    expect(await stockOf(inventory, inactive.id)).toEqual({ available: 10, reserved: 0 })
  })

  it('when the customer and the shipping address are given, then inventory.reserved carries them (for the shipment step)', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const customerId = randomUUID()
    const shippingAddress = { street: '1 Main St', city: 'Springfield', zip: '12345' }
    await reserve(orderId, [{ productId: product.id, quantity: 1 }], { customerId, shippingAddress })
    expect((await outboxOf(inventory, orderId))[0]?.payload.data).toEqual({
      orderId,
      reservationId: expect.any(String),
      items: [{ productId: product.id, quantity: 1 }],
      customerId,
      shippingAddress,
    })
  })

  it('when the same order is reserved again (a redelivery, the saga asking again), then no second reservation; inventory.reserved answers again with the same reservationId', async () => {
    const product = await createTestProduct(inventory, { stock: 10 })
    const orderId = randomUUID()
    const items = [{ productId: product.id, quantity: 3 }]
    const first = await reserve(orderId, items)
    expect(first).toMatchObject({ outcome: 'reserved' })
    const { reservationId } = first as { reservationId: string }
    const again = {
      outcome: 'already reserved',
      reservationId,
      items: [{ productId: product.id, quantity: 3 }],
    }
    expect(await reserve(orderId, items)).toEqual(again)
    // even two at once: the second waits for the first (the order's lock)
    expect(await Promise.all([reserve(orderId, items), reserve(orderId, items)])).toEqual([again, again])
    expect(await stockOf(inventory, product.id)).toEqual({ available: 7, reserved: 3 })
    const outbox = await outboxOf(inventory, orderId)
    expect(outbox.map((row) => [row.eventType, row.payload.data.reservationId])).toEqual(
      Array.from({ length: 4 }, () => ['inventory.reserved', reservationId]),
    )
  })

  it('when a new order is reserved twice at the same moment, then exactly one reservation stands and both answer with it', async () => {
    const product = await createTestProduct(inventory, { stock: 10 })
    const orderId = randomUUID()
    const items = [{ productId: product.id, quantity: 4 }]
    const outcomes = await Promise.all([reserve(orderId, items), reserve(orderId, items)])
    expect(outcomes.map((outcome) => outcome.outcome).sort()).toEqual(['already reserved', 'reserved'])
    expect(await stockOf(inventory, product.id)).toEqual({ available: 6, reserved: 4 })
    const outbox = await outboxOf(inventory, orderId)
    expect(outbox.map((row) => row.eventType)).toEqual(['inventory.reserved', 'inventory.reserved'])
    expect(outbox[1]?.payload.data).toEqual(outbox[0]?.payload.data)
  })

  it('when a shipped order is reserved again, then inventory.reserved answers with its reservation; nothing moves', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const items = [{ productId: product.id, quantity: 2 }]
    const first = (await reserve(orderId, items)) as { reservationId: string }
    await ship(orderId)
    expect(await reserve(orderId, items)).toMatchObject({
      outcome: 'already reserved',
      reservationId: first.reservationId,
    })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 3, reserved: 0 })
  })

  it("when a released order is reserved again, then nothing is reserved: inventory.failed 'the reservation was released'", async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const items = [{ productId: product.id, quantity: 2 }]
    await reserve(orderId, items)
    await release(orderId)
    expect(await reserve(orderId, items)).toEqual({
      outcome: 'refused',
      reason: 'the reservation was released',
    })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 5, reserved: 0 })
    const outbox = await outboxOf(inventory, orderId)
    expect(outbox.map((row) => row.eventType)).toEqual([
      'inventory.reserved',
      'inventory.released',
      'inventory.failed',
    ])
    expect(outbox[2]?.payload.data).toEqual({ orderId, reason: 'the reservation was released' })
  })

  it("when the release was requested before the order is reserved, then nothing is reserved: inventory.failed 'the order was cancelled'", async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    await release(orderId, 'payment failed')
    expect(await reserve(orderId, [{ productId: product.id, quantity: 2 }])).toEqual({
      outcome: 'refused',
      reason: 'the order was cancelled',
    })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 5, reserved: 0 })
    expect(await reservationOf(orderId)).toBeUndefined()
    expect((await movementsOf(orderId)).length).toBe(0)
    expect((await outboxOf(inventory, orderId)).map((row) => row.payload.data)).toEqual([
      { orderId, reason: 'payment failed' },
      { orderId, reason: 'the order was cancelled' },
    ])
  })

  it('when the order id is not a uuid, then the event is refused (thrown, so it is retried and dead-lettered)', async () => {
    const product = await createTestProduct(inventory)
    await expect(reserve('order-1', [{ productId: product.id, quantity: 1 }])).rejects.toThrow(/not a uuid/)
    expect(await stockOf(inventory, product.id)).toEqual({ available: 10, reserved: 0 })
  })
})

describe('no overselling', () => {
  it('when 30 orders of 1 race for 10 units, then exactly 10 are reserved and 20 fail; available 0, reserved 10', async () => {
    const product = await createTestProduct(inventory, { stock: 10 })
    const orders = Array.from({ length: 30 }, () => randomUUID())
    const outcomes = await Promise.all(
      orders.map((orderId) => reserve(orderId, [{ productId: product.id, quantity: 1 }])),
    )
    const counts = outcomes.reduce<Record<string, number>>((tally, { outcome }) => {
      tally[outcome] = (tally[outcome] ?? 0) + 1
      return tally
    }, {})
    expect(counts).toEqual({ reserved: 10, failed: 20 })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 0, reserved: 10 })
    const [held] = await inventory.sql<{ n: number }[]>`
      select count(*)::int as n from reservations r join reservation_lines l on l.reservation_id = r.id
      where l.product_id = ${product.id} and r.status = 'held'`
    expect(held?.n).toBe(10)
    const events = await inventory.sql<{ eventType: string; n: number }[]>`
      select event_type, count(*)::int as n from outbox
      where aggregate_id in ${inventory.sql(orders)} group by event_type order by event_type`
    expect([...events]).toEqual([
      { eventType: 'inventory.failed', n: 20 },
      { eventType: 'inventory.reserved', n: 10 },
    ])
  })

  it('when orders of two products race in opposite line orders, then none deadlocks and stock adds up', async () => {
    const a = await createTestProduct(inventory, { stock: 20 })
    const b = await createTestProduct(inventory, { stock: 20 })
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        reserve(
          randomUUID(),
          i % 2 === 0
            ? [
                { productId: a.id, quantity: 1 },
                { productId: b.id, quantity: 1 },
              ]
            : [
                { productId: b.id, quantity: 1 },
                { productId: a.id, quantity: 1 },
              ],
        ),
      ),
    )
    expect(outcomes.filter(({ outcome }) => outcome === 'reserved')).toHaveLength(20)
    expect(await stockOf(inventory, a.id)).toEqual({ available: 0, reserved: 20 })
    expect(await stockOf(inventory, b.id)).toEqual({ available: 0, reserved: 20 })
  })

  it('when new orders of two products are reserved while held ones of the same products ship and are released, then none deadlocks and stock adds up', async () => {
    const a = await createTestProduct(inventory, { stock: 100 })
    const b = await createTestProduct(inventory, { stock: 100 })
    const both = (first: string, second: string, quantity: number) => [
      { productId: first, quantity },
      { productId: second, quantity },
    ]
    const held = Array.from({ length: 10 }, () => randomUUID())
    for (const orderId of held) await reserve(orderId, both(a.id, b.id, 1))
    const [reserved, shipped, released] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => reserve(randomUUID(), both(b.id, a.id, 2)))),
      Promise.all(held.slice(0, 5).map((orderId) => ship(orderId))),
      Promise.all(held.slice(5).map((orderId) => release(orderId))),
    ])
    expect(reserved.map(({ outcome }) => outcome)).toEqual(Array.from({ length: 10 }, () => 'reserved'))
    expect(shipped.map(({ outcome }) => outcome)).toEqual(Array.from({ length: 5 }, () => 'shipped'))
    expect(released.map(({ outcome }) => outcome)).toEqual(Array.from({ length: 5 }, () => 'released'))
    // 100 - 10 held - 20 new + 5 released; 10 held - 5 shipped - 5 released + 20 new
    for (const product of [a, b]) {
      expect(await stockOf(inventory, product.id)).toEqual({ available: 75, reserved: 20 })
    }
  })
})

describe('releasing and shipping', () => {
  it('when a reserved order is cancelled, then its stock goes back, audited, and inventory.released is appended once', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const reserved = await reserve(orderId, [{ productId: product.id, quantity: 4 }])
    const released = await release(orderId, 'customer cancelled')
    expect(released).toEqual({
      outcome: 'released',
      reservationId: (reserved as { reservationId: string }).reservationId,
    })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 5, reserved: 0 })
    expect((await reservationOf(orderId))?.status).toBe('released')
    expect((await movementsOf(orderId)).at(-1)).toEqual({
      productId: product.id,
      deltaAvailable: 4,
      deltaReserved: -4,
      reason: 'released: customer cancelled',
    })
    const outbox = await outboxOf(inventory, orderId)
    expect(outbox.map((row) => row.eventType)).toEqual(['inventory.reserved', 'inventory.released'])
    expect(outbox[1]?.payload.data).toEqual({
      orderId,
      reservationId: (reserved as { reservationId: string }).reservationId,
      reason: 'customer cancelled',
    })

    // again (the saga asking again): nothing held, nothing moves; answered without reservationId
    expect(await release(orderId, 'customer cancelled')).toEqual({ outcome: 'nothing held' })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 5, reserved: 0 })
    const again = await outboxOf(inventory, orderId)
    expect(again.map((row) => row.eventType)).toEqual([
      'inventory.reserved',
      'inventory.released',
      'inventory.released',
    ])
    expect(again[2]?.payload.data).toEqual({ orderId, reason: 'customer cancelled' })
  })

  it('when an order that reserved nothing is released, then nothing changes; inventory.released answers without reservationId', async () => {
    const orderId = randomUUID()
    expect(await release(orderId, 'payment failed')).toEqual({ outcome: 'nothing held' })
    expect(await release('not-a-uuid', 'payment failed')).toEqual({ outcome: 'nothing held' })
    for (const id of [orderId, 'not-a-uuid']) {
      expect((await outboxOf(inventory, id)).map((row) => row.payload)).toEqual([
        expect.objectContaining({
          type: 'inventory.released',
          source: 'inventory',
          data: { orderId: id, reason: 'payment failed' },
        }),
      ])
    }
  })

  it('when a reserved order ships, then its reserved stock leaves and the reservation is shipped (no event); a later release does nothing', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    await reserve(orderId, [{ productId: product.id, quantity: 2 }])
    expect(await ship(orderId)).toMatchObject({ outcome: 'shipped' })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 3, reserved: 0 })
    expect((await reservationOf(orderId))?.status).toBe('shipped')
    expect((await movementsOf(orderId)).at(-1)).toEqual({
      productId: product.id,
      deltaAvailable: 0,
      deltaReserved: -2,
      reason: 'shipped',
    })
    expect(await ship(orderId)).toEqual({ outcome: 'nothing held' })
    expect(await release(orderId)).toEqual({ outcome: 'nothing held' })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 3, reserved: 0 })
    expect((await outboxOf(inventory, orderId)).map((row) => row.eventType)).toEqual([
      'inventory.reserved',
      'inventory.released',
    ])
    expect((await outboxOf(inventory, orderId))[1]?.payload.data).not.toHaveProperty('reservationId')
  })

  it('when a release and a shipment of one order race, then exactly one applies', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    await reserve(orderId, [{ productId: product.id, quantity: 2 }])
    const [released, shipped] = await Promise.all([release(orderId), ship(orderId)])
    const applied = [released.outcome, shipped.outcome].filter((outcome) => outcome !== 'nothing held')
    expect(applied).toHaveLength(1)
    const stock = await stockOf(inventory, product.id)
    expect(stock.reserved).toBe(0)
    expect(stock.available).toBe(released.outcome === 'released' ? 5 : 3)
  })

  it('when the reservation and the release of one order race, then they never interleave: either reserved then released, or refused; the stock always comes back', async () => {
    const product = await createTestProduct(inventory, { stock: 40 })
    const orders = Array.from({ length: 20 }, () => randomUUID())
    const outcomes = await Promise.all(
      orders.map(async (orderId, i) => {
        const reserving = () => reserve(orderId, [{ productId: product.id, quantity: 2 }])
        const releasing = () => release(orderId, 'payment refunded')
        // half start with the reservation, half with the release
        const [reserved, released] =
          i % 2 === 0
            ? await Promise.all([reserving(), releasing()])
            : await Promise.all([releasing(), reserving()]).then(([b, a]) => [a, b] as const)
        return { orderId, reserved, released }
      }),
    )
    for (const { orderId, reserved, released } of outcomes) {
      const events = (await outboxOf(inventory, orderId)).map((row) => row.eventType)
      if (reserved.outcome === 'reserved') {
        // the reservation went first: the release waited for it and gave it back
        expect(released).toEqual({ outcome: 'released', reservationId: reserved.reservationId })
        expect(events).toEqual(['inventory.reserved', 'inventory.released'])
      } else {
        // the release went first: nothing was held, and the reservation was refused
        expect(reserved).toEqual({ outcome: 'refused', reason: 'the order was cancelled' })
        expect(released).toEqual({ outcome: 'nothing held' })
        expect(events).toEqual(['inventory.released', 'inventory.failed'])
        expect(await reservationOf(orderId)).toBeUndefined()
      }
    }
    expect(await stockOf(inventory, product.id)).toEqual({ available: 40, reserved: 0 })
  })
})
