// Restocks as the use case applies them in a consumer's transaction (inventory.restock_requested): a return's lines
// go back to available stock once per return, every request is answered with inventory.restocked, two returns of one
// order both go back, lines naming no product are left out, bad ids are refused, and under concurrency (the same
// return twice, restocks racing reservations) nothing deadlocks and stock is conserved. Real PostgreSQL.
import { randomUUID } from 'node:crypto'
import { type TransactionSql, transaction } from '@meridian/db'
import { eventually } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StockToPutBack } from '../src/domain/restocks.ts'
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
const restock = (request: StockToPutBack) =>
  inTransaction((tx) => inventory.restocks.restock({ reason: `return ${request.restockId}`, ...request }, tx))

/** An order of the lines, reserved and shipped: its units have left the warehouse (reserved back to 0). */
async function shippedOrder(items: { productId: string; quantity: number }[]): Promise<string> {
  const orderId = randomUUID()
  await inTransaction((tx) => inventory.reservations.reserveOrder({ orderId, items }, tx))
  await inTransaction((tx) => inventory.reservations.shipOrder({ orderId }, tx))
  return orderId
}

/** The inventory.restocked.v2 answers of an order, oldest first. */
const restockedOf = async (orderId: string) =>
  (await outboxOf(inventory, orderId))
    .filter((row) => row.eventType === 'inventory.restocked.v2')
    .map((row) => row.payload.data)

const movementsOf = (orderId: string) => inventory.sql`
  select product_id, delta_available, delta_reserved, reason from stock_movements
  where order_id = ${orderId} and reason like 'restocked%' order by id`

describe('restocking a return', () => {
  it('when a return of part of a shipped order is restocked, then exactly its quantities go back to available, audited, and inventory.restocked.v2 answers with its lines', async () => {
    const a = await createTestProduct(inventory, { stock: 10 })
    const b = await createTestProduct(inventory, { stock: 10 })
    const orderId = await shippedOrder([
      { productId: a.id, quantity: 3 },
      { productId: b.id, quantity: 2 },
    ])
    expect(await stockOf(inventory, a.id)).toEqual({ available: 7, reserved: 0 })
    const restockId = randomUUID()

    const outcome = await restock({
      restockId,
      orderId,
      items: [
        { productId: b.id, quantity: 1 },
        { productId: a.id, quantity: 2 },
      ],
    })

    const lines = [
      { productId: a.id, quantity: 2 },
      { productId: b.id, quantity: 1 },
    ].sort((x, y) => (x.productId < y.productId ? -1 : 1))
    expect(outcome).toEqual({ outcome: 'restocked', items: lines })
    expect(await stockOf(inventory, a.id)).toEqual({ available: 9, reserved: 0 })
    expect(await stockOf(inventory, b.id)).toEqual({ available: 9, reserved: 0 })
    expect([...(await movementsOf(orderId))]).toEqual(
      lines.map(({ productId, quantity }) => ({
        productId,
        deltaAvailable: quantity,
        deltaReserved: 0,
        reason: `restocked: return ${restockId}`,
      })),
    )
    const [answer] = await outboxOf(inventory, orderId).then((rows) =>
      rows.filter((row) => row.eventType === 'inventory.restocked.v2'),
    )
    expect(answer).toEqual({
      eventType: 'inventory.restocked.v2',
      aggregateId: orderId,
      payload: expect.objectContaining({
        type: 'inventory.restocked.v2',
        source: 'inventory',
        data: { restockId, orderId, items: lines },
      }),
    })
  })

  it('when the restock is asked again (the process on its deadline, a redelivery), then the stock stays as it is and inventory.restocked.v2 answers again with the same lines', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = await shippedOrder([{ productId: product.id, quantity: 4 }])
    const request = { restockId: randomUUID(), orderId, items: [{ productId: product.id, quantity: 3 }] }
    expect((await restock(request)).outcome).toBe('restocked')
    expect(await stockOf(inventory, product.id)).toEqual({ available: 4, reserved: 0 })

    const again = await restock(request)
    // even one that carries other lines: the return's stock went back once, with the lines first recorded
    const changed = await restock({ ...request, items: [{ productId: product.id, quantity: 1 }] })

    expect(again).toEqual({ outcome: 'already restocked', items: request.items })
    expect(changed).toEqual({ outcome: 'already restocked', items: request.items })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 4, reserved: 0 })
    expect(await movementsOf(orderId)).toHaveLength(1)
    const answers = await restockedOf(orderId)
    expect(answers).toHaveLength(3)
    for (const each of answers)
      expect(each).toEqual({ restockId: request.restockId, orderId, items: request.items })
  })

  it('when two returns of one order are restocked, then both go back, each once, each answered', async () => {
    const product = await createTestProduct(inventory, { stock: 10 })
    const orderId = await shippedOrder([{ productId: product.id, quantity: 5 }])
    const first = { restockId: randomUUID(), orderId, items: [{ productId: product.id, quantity: 2 }] }
    const second = { restockId: randomUUID(), orderId, items: [{ productId: product.id, quantity: 3 }] }
    await restock(first)
    await restock(second)
    await restock(first)
    expect(await stockOf(inventory, product.id)).toEqual({ available: 10, reserved: 0 })
    expect((await restockedOf(orderId)).map((each) => each.restockId)).toEqual([
      first.restockId,
      second.restockId,
      first.restockId,
    ])
  })

  it('when a product is named twice, then its quantities are added up into one line', async () => {
    const product = await createTestProduct(inventory, { stock: 10 })
    const orderId = await shippedOrder([{ productId: product.id, quantity: 4 }])
    const outcome = await restock({
      restockId: randomUUID(),
      orderId,
      items: [
        { productId: product.id, quantity: 1 },
        { productId: product.id.toUpperCase(), quantity: 2 },
      ],
    })
    expect(outcome).toEqual({ outcome: 'restocked', items: [{ productId: product.id, quantity: 3 }] })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 9, reserved: 0 })
  })

  it('when a line names a product the catalogue does not have (or an id that is not a uuid), then the other lines go back and the answer lists only them; asked again, the same', async () => {
    const product = await createTestProduct(inventory, { stock: 10 })
    const inactive = await createTestProduct(inventory, { stock: 1, active: false })
    const orderId = randomUUID()
    const restockId = randomUUID()
    const request = {
      restockId,
      orderId,
      items: [
        { productId: randomUUID(), quantity: 1 },
        { productId: 'not-a-product', quantity: 1 },
        { productId: product.id, quantity: 2 },
        { productId: inactive.id, quantity: 1 },
      ],
    }
    const put = [
      { productId: product.id, quantity: 2 },
      { productId: inactive.id, quantity: 1 },
    ].sort((x, y) => (x.productId < y.productId ? -1 : 1))

    expect(await restock(request)).toEqual({ outcome: 'restocked', items: put })
    expect(await restock(request)).toEqual({ outcome: 'already restocked', items: put })

    expect(await stockOf(inventory, product.id)).toEqual({ available: 12, reserved: 0 })
    // an inactive product exists: its units come back all the same
    expect(await stockOf(inventory, inactive.id)).toEqual({ available: 2, reserved: 0 })
    expect(await restockedOf(orderId)).toEqual([
      { restockId, orderId, items: put },
      { restockId, orderId, items: put },
    ])
    // the row keeps what was asked, unknown lines included
    const [row] = await inventory.sql<{ asked: { productId: string; quantity: number }[] }[]>`
      select asked from restocks where return_id = ${restockId}`
    expect(row?.asked).toHaveLength(4)
  })

  it('when no line names a product, then nothing moves and inventory.restocked.v2 answers with no lines', async () => {
    const orderId = randomUUID()
    const restockId = randomUUID()
    const outcome = await restock({ restockId, orderId, items: [{ productId: randomUUID(), quantity: 2 }] })
    expect(outcome).toEqual({ outcome: 'restocked', items: [] })
    expect(await restockedOf(orderId)).toEqual([{ restockId, orderId, items: [] }])
  })

  it('when the return id or the order id is not a uuid, then the event is refused (thrown, so it is retried and dead-lettered) and nothing is written', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const items = [{ productId: product.id, quantity: 1 }]
    const orderId = randomUUID()
    await expect(restock({ restockId: 'return-1', orderId, items })).rejects.toThrow(
      /restock id .* not a uuid/,
    )
    await expect(restock({ restockId: randomUUID(), orderId: 'order-1', items })).rejects.toThrow(
      /order id .* not a uuid/,
    )
    expect(await stockOf(inventory, product.id)).toEqual({ available: 5, reserved: 0 })
    expect(await outboxOf(inventory, orderId)).toEqual([])
  })

  it("when a line's quantity would take the product past PostgreSQL's integer, then the restock fails whole and nothing is written", async () => {
    const a = await createTestProduct(inventory, { stock: 5 })
    const b = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const restockId = randomUUID()
    await expect(
      restock({
        restockId,
        orderId,
        items: [
          { productId: a.id, quantity: 1 },
          { productId: b.id, quantity: 2_147_483_647 },
        ],
      }),
    ).rejects.toThrow()
    expect(await stockOf(inventory, a.id)).toEqual({ available: 5, reserved: 0 })
    expect(await stockOf(inventory, b.id)).toEqual({ available: 5, reserved: 0 })
    expect(await inventory.sql`select 1 from restocks where return_id = ${restockId}`).toHaveLength(0)
  })
})

describe('restocks under concurrency', () => {
  it('when the same return is restocked several times at the same moment, then its stock goes back once and every request is answered with its lines', async () => {
    const product = await createTestProduct(inventory, { stock: 10 })
    const orderId = await shippedOrder([{ productId: product.id, quantity: 6 }])
    const request = { restockId: randomUUID(), orderId, items: [{ productId: product.id, quantity: 5 }] }
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => restock(request)))
    expect(outcomes.filter(({ outcome }) => outcome === 'restocked')).toHaveLength(1)
    for (const each of outcomes) expect(each.items).toEqual(request.items)
    expect(await stockOf(inventory, product.id)).toEqual({ available: 9, reserved: 0 })
    expect(await restockedOf(orderId)).toHaveLength(6)
  })

  it('when a restock is asked while the first one of the return is not committed yet, then it waits for it, moves nothing and answers with the lines the first recorded', async () => {
    const product = await createTestProduct(inventory, { stock: 10 })
    const orderId = await shippedOrder([{ productId: product.id, quantity: 4 }])
    const request = { restockId: randomUUID(), orderId, items: [{ productId: product.id, quantity: 3 }] }
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let applied = () => {}
    const firstApplied = new Promise<void>((resolve) => {
      applied = resolve
    })
    // the first restock's transaction puts the stock back and stays open
    const first = inTransaction(async (tx) => {
      const outcome = await inventory.restocks.restock(request, tx)
      applied()
      await held
      return outcome
    })
    await firstApplied
    const second = restock(request)
    // the second cannot finish before the first commits: it waits for the product's row
    let finished = false
    void second.then(() => {
      finished = true
    })
    // no pause to see it not finish: it is seen waiting for a lock in PostgreSQL, and then it has not finished
    await eventually('the second restock waits for the product’s row', async () => {
      const [waiting] = await inventory.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`
      return (waiting?.n ?? 0) >= 1
    })
    const raced = finished ? 'finished' : 'waiting'
    release()
    const outcomes = await Promise.all([first, second])
    expect(raced).toBe('waiting')
    expect(outcomes).toEqual([
      { outcome: 'restocked', items: request.items },
      { outcome: 'already restocked', items: request.items },
    ])
    expect(await stockOf(inventory, product.id)).toEqual({ available: 9, reserved: 0 })
    expect(await restockedOf(orderId)).toHaveLength(2)
  })

  it('when restocks and reservations of the same two products race in opposite line orders, then none deadlocks and stock is conserved', async () => {
    const a = await createTestProduct(inventory, { stock: 20 })
    const b = await createTestProduct(inventory, { stock: 20 })
    const both = (first: string, second: string, quantity: number) => [
      { productId: first, quantity },
      { productId: second, quantity },
    ]
    // 10 orders of one of each, shipped: 10 of each left
    const shipped: string[] = []
    for (let i = 0; i < 10; i += 1) shipped.push(await shippedOrder(both(a.id, b.id, 1)))
    expect(await stockOf(inventory, a.id)).toEqual({ available: 10, reserved: 0 })

    const [restocked, reserved] = await Promise.all([
      Promise.all(
        shipped.map((orderId, i) =>
          restock({
            restockId: randomUUID(),
            orderId,
            items: i % 2 === 0 ? both(a.id, b.id, 1) : both(b.id, a.id, 1),
          }),
        ),
      ),
      Promise.all(
        Array.from({ length: 15 }, (_, i) =>
          inTransaction((tx) =>
            inventory.reservations.reserveOrder(
              { orderId: randomUUID(), items: i % 2 === 0 ? both(b.id, a.id, 1) : both(a.id, b.id, 1) },
              tx,
            ),
          ),
        ),
      ),
    ])

    expect(restocked.map(({ outcome }) => outcome)).toEqual(Array.from({ length: 10 }, () => 'restocked'))
    const held = reserved.filter(({ outcome }) => outcome === 'reserved').length
    // 10 left + 10 back; each reservation that held took one of each, whichever ran first
    expect(held).toBeGreaterThanOrEqual(10)
    for (const product of [a, b]) {
      expect(await stockOf(inventory, product.id)).toEqual({ available: 20 - held, reserved: held })
    }
  })
})
