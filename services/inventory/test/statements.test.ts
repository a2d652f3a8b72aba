// The statements each event costs inventory in its consumer's transaction, counted as they are sent to PostgreSQL
// (createDatabase's onQuery): every statement a handler awaits is a socket write and two wakeups on each side, the
// largest cost of a busy consumer, so each budget is named here and a change that grows it fails. The consumer's own
// begin, inbox row and commit (the events package's) are not counted: only what the use case sends.
import { randomUUID } from 'node:crypto'
import { createDatabase, transaction } from '@meridian/db'
import { type StatementCounter, statementCounter } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildInventoryTestApp, type InventoryTestApp } from './support/app.ts'
import { createTestProduct, outboxOf, stockOf } from './support/products.ts'

/**
 * payment.processed (and inventory.reservation_requested) reserving: the order's lock, one statement (what the order
 * has read, the stock locked, checked and held, the reservation written), the outbox row
 */
const reserveBudget = 3
/** the same when the order was reserved already (a redelivery, the saga asking again): nothing held, answered again */
const reserveAgainBudget = 3
/** a line short: the statement holds nothing, inventory.failed is appended */
const reserveShortBudget = 3
/** shipment.created: the held reservation shipped, its stock gone, audited, in one statement */
const shipBudget = 1
/** inventory.release_requested: the order's lock, the request recorded, the held stock given back, the outbox row */
const releaseBudget = 4
/**
 * inventory.restock_requested: one statement (the products locked, the return recorded, its lines put back, audited),
 * the outbox row; the same when the return was restocked before (nothing moves, inventory.restocked again)
 */
const restockBudget = 2
const restockAgainBudget = 2

let inventory: InventoryTestApp
let counter: StatementCounter<ReturnType<typeof createDatabase>>

beforeAll(async () => {
  inventory = await buildInventoryTestApp()
  counter = await statementCounter((onQuery) =>
    createDatabase(inventory.config.DATABASE_URL, {
      max: 1,
      applicationName: 'inventory-test-counted',
      onQuery,
    }),
  )
})

afterAll(async () => {
  await counter?.end()
  await inventory?.close()
})

const statementsOf: StatementCounter<ReturnType<typeof createDatabase>>['statementsOf'] = (work) =>
  counter.statementsOf(work)

describe('inventory: statements per event (the budgets)', () => {
  it(`when a paid order is reserved, then it costs ${reserveBudget} statements, and ${reserveAgainBudget} when it is asked again`, async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const items = [{ productId: product.id, quantity: 2 }]
    const first = await statementsOf((tx) => inventory.reservations.reserveOrder({ orderId, items }, tx))
    expect(first, first.join('\n')).toHaveLength(reserveBudget)
    const again = await statementsOf((tx) => inventory.reservations.reserveOrder({ orderId, items }, tx))
    expect(again, again.join('\n')).toHaveLength(reserveAgainBudget)
    expect(await stockOf(inventory, product.id)).toEqual({ available: 3, reserved: 2 })
    expect((await outboxOf(inventory, orderId)).map((row) => row.eventType)).toEqual([
      'inventory.reserved',
      'inventory.reserved',
    ])
  })

  it(`when a line is short, then the refusal costs ${reserveShortBudget} statements`, async () => {
    const product = await createTestProduct(inventory, { stock: 1 })
    const orderId = randomUUID()
    const items = [{ productId: product.id, quantity: 2 }]
    const statements = await statementsOf((tx) => inventory.reservations.reserveOrder({ orderId, items }, tx))
    expect(statements, statements.join('\n')).toHaveLength(reserveShortBudget)
    expect((await outboxOf(inventory, orderId)).map((row) => row.eventType)).toEqual(['inventory.failed'])
  })

  it(`when a reserved order ships, then it costs ${shipBudget} statement`, async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    await transaction(inventory.sql, (tx) =>
      inventory.reservations.reserveOrder({ orderId, items: [{ productId: product.id, quantity: 2 }] }, tx),
    )
    const statements = await statementsOf((tx) => inventory.reservations.shipOrder({ orderId }, tx))
    expect(statements, statements.join('\n')).toHaveLength(shipBudget)
    expect(await stockOf(inventory, product.id)).toEqual({ available: 3, reserved: 0 })
  })

  it(`when a reserved order is released, then it costs ${releaseBudget} statements`, async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    await transaction(inventory.sql, (tx) =>
      inventory.reservations.reserveOrder({ orderId, items: [{ productId: product.id, quantity: 2 }] }, tx),
    )
    const statements = await statementsOf((tx) =>
      inventory.reservations.releaseOrder({ orderId, reason: 'customer cancelled' }, tx),
    )
    expect(statements, statements.join('\n')).toHaveLength(releaseBudget)
    expect(await stockOf(inventory, product.id)).toEqual({ available: 5, reserved: 0 })
  })

  it(`when a return is restocked, then it costs ${restockBudget} statements, and ${restockAgainBudget} when it is asked again`, async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const request = { restockId: randomUUID(), orderId, items: [{ productId: product.id, quantity: 2 }] }
    const first = await statementsOf((tx) => inventory.restocks.restock(request, tx))
    expect(first, first.join('\n')).toHaveLength(restockBudget)
    const again = await statementsOf((tx) => inventory.restocks.restock(request, tx))
    expect(again, again.join('\n')).toHaveLength(restockAgainBudget)
    expect(await stockOf(inventory, product.id)).toEqual({ available: 7, reserved: 0 })
    expect((await outboxOf(inventory, orderId)).map((row) => row.eventType)).toEqual([
      'inventory.restocked.v2',
      'inventory.restocked.v2',
    ])
  })
})
