// The statements shipment.requested costs shipping in its consumer's transaction, counted as they are sent to
// PostgreSQL (createDatabase's onQuery): every statement a handler awaits is a socket write and two wakeups on each
// side, the largest cost of a busy consumer, so each budget is named here and a change that grows it fails. The
// consumer's own begin, inbox row and commit (the events package's) are not counted: only what the use case sends.
import { createDatabase, type TransactionSql } from '@meridian/db'
import { type StatementCounter, statementCounter } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildShippingTestApp, type ShippingTestApp } from './support/app.ts'
import { outboxOf, reservedOrder } from './support/shipments.ts'

/** shipment.requested of a new shipment: the shipment, its shipment.created */
const createBudget = 2
/** asked again (the saga heard no shipment.created in time): the insert that finds the order's shipment, its row
 * locked and read afresh (a shipment committed meanwhile is seen), shipment.created again */
const announceAgainBudget = 3

let shipping: ShippingTestApp
let counter: StatementCounter<ReturnType<typeof createDatabase>>

beforeAll(async () => {
  shipping = await buildShippingTestApp()
  counter = await statementCounter((onQuery) =>
    createDatabase(shipping.config.DATABASE_URL, {
      max: 1,
      applicationName: 'shipping-test-counted',
      onQuery,
    }),
  )
})

afterAll(async () => {
  await counter?.end()
  await shipping?.close()
})

const statementsOf: StatementCounter<ReturnType<typeof createDatabase>>['statementsOf'] = (work) =>
  counter.statementsOf(work)

describe('shipping: statements per event (the budgets)', () => {
  it(`when a shipment is requested, then it costs ${createBudget} statements, and ${announceAgainBudget} when requested again`, async () => {
    const order = reservedOrder()
    const request = (tx: TransactionSql) =>
      shipping.shipments.createOrderShipment(order, tx, { announceExisting: true })
    const created = await statementsOf(request)
    expect(created, created.join('\n')).toHaveLength(createBudget)
    const again = await statementsOf(request)
    expect(again, again.join('\n')).toHaveLength(announceAgainBudget)
    expect((await outboxOf(shipping, order.orderId)).map((row) => row.eventType)).toEqual([
      'shipment.created',
      'shipment.created',
    ])
  })
})
