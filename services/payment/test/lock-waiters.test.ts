// More charges of one order at once than the pool has connections: each waits for the order's advisory lock holding
// a connection of the pool, and the one that gets the lock records its charge attempt outside its transaction. Were
// that write on the same pool, it would wait for a connection the waiters hold while they wait for its lock — a
// deadlock PostgreSQL cannot see, which froze the payment service after a restart with a backlog (the cluster
// campaign's host-kill: charged, never answered, never refunded), and which ten concurrent POST /payments of one
// order could cause at will. On a real database against infra's payment provider simulator: the order's lock is held
// from outside until every charge waits behind it, then let go; every charge must be answered.
// And two events of one order in one consumer transaction (the consumer applies a fetched run of events together): the
// first answers the order and so writes its row in the transaction; had the second written that row through the
// pool of its own, that write would wait for the transaction that waits for it — which wedged payment in CI (two
// payment.requested of one order in a run: an operator's retry beside the saga's), each redelivery wedging again.
import { randomUUID } from 'node:crypto'
import { createDatabase, type Queryable, type Sql, transaction } from '@meridian/db'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { accessToken, eventually, scaledMs, tokenEnv, waitMs } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPaymentsRepository } from '../src/data/payments-repository.ts'
import type { ChargeOrderOutcome } from '../src/domain/order-step.ts'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import {
  handleOrderPlaced,
  orderAwaitingPayment,
  type PlacedOrderData,
  placedOrder,
} from './support/orders.ts'
import { card, cards, orderSummary, providerToken } from './support/provider.ts'

/** The test app's pool (support/app.ts: createDatabase's default). */
const poolSize = 10

let provider: PaymentSimulator
let payment: PaymentTestApp
let holder: Sql

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0 })
  payment = await buildPaymentTestApp({
    ...tokenEnv,
    STRIPE_API_BASE: provider.url,
    PAYMENT_RECONCILE_INTERVAL_MS: '3600000',
  })
  holder = createDatabase(payment.config.DATABASE_URL, {
    max: 1,
    applicationName: 'payment-test-lock-holder',
  })
})

afterAll(async () => {
  await holder?.end({ timeout: 5 })
  await payment?.close()
  await provider?.close()
})

/** Transactions of this database waiting for an advisory lock. */
async function lockWaiters(db: Queryable): Promise<number> {
  const [row] = await db<{ count: number }[]>`
    select count(*)::int from pg_locks
    where locktype = 'advisory' and not granted
      and database = (select oid from pg_database where datname = current_database())`
  return row?.count ?? 0
}

/** What `work` answers, or an error naming `what` when it has not answered by the time a stuck one is told apart. */
async function answeredInTime<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not answered (stuck)`)), scaledMs(waitMs))
  })
  try {
    return await Promise.race([work, stuck])
  } finally {
    clearTimeout(timer)
  }
}

/** The order step for each of `events`, one after the other in one transaction, as the consumer applies a run. */
const chargedInOneTransaction = (events: PlacedOrderData[]) =>
  answeredInTime(
    `${events.length} events of order ${events[0]?.orderId} in one transaction`,
    transaction(payment.sql, async (tx) => {
      const outcomes: ChargeOrderOutcome[] = []
      for (const data of events) outcomes.push(await payment.payments.chargeOrder(data, tx))
      return outcomes
    }),
  )

/**
 * Holds the order's advisory lock from a connection of its own while `start` sends its charges, until `waiting` of
 * them wait behind it; then lets go and answers what the charges answered, or how many were answered when they
 * stop moving (a deadlock) before all are.
 */
async function behindTheOrdersLock<T>(
  orderId: string,
  waiting: number,
  start: () => Promise<T>[],
): Promise<T[]> {
  let charges: Promise<T>[] = []
  await transaction(holder, async (tx) => {
    await createPaymentsRepository(tx).lockOrder(orderId, tx)
    charges = start()
    await eventually(
      `${waiting} charges of the order wait for its lock`,
      async () => (await lockWaiters(tx)) >= waiting,
    )
  })
  // settled, fulfilled or not: a charge that failed has answered too (Promise.all reports how)
  let answered = 0
  for (const charge of charges) void charge.finally(() => answered++).catch(() => {})
  let timer: NodeJS.Timeout | undefined
  const stuck = new Promise<'stuck'>((resolve) => {
    timer = setTimeout(() => resolve('stuck'), scaledMs(waitMs))
  })
  try {
    const all = await Promise.race([Promise.all(charges), stuck])
    if (all === 'stuck')
      throw new Error(`${answered} of ${charges.length} charges of the order were answered`)
    return all
  } finally {
    clearTimeout(timer)
  }
}

describe('charges of one order waiting for its lock, more of them than the pool has connections', () => {
  it(`when ${poolSize} consumer transactions charge one order at once, then one charges it and every other answers with that charge`, async () => {
    const data = placedOrder({ token: await providerToken(provider.url, cards.succeeds) })
    const outcomes = await behindTheOrdersLock(data.orderId, poolSize, () =>
      Array.from({ length: poolSize }, () => handleOrderPlaced(payment, data)),
    )
    const kinds = outcomes.map((outcome) => outcome.outcome).sort()
    expect(kinds).toEqual([...Array(poolSize - 1).fill('already processed'), 'processed'])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 0 })
  })

  it(`when ${poolSize + 2} customers' payments of one order come at once, then one is charged (201) and the others are refused (409)`, async () => {
    const order = await orderAwaitingPayment(payment)
    const headers = { authorization: `Bearer ${accessToken('user', order.customerId)}` }
    const pay = () =>
      payment.app.inject({
        method: 'POST',
        url: '/api/v1/payments',
        headers: { ...headers, 'idempotency-key': randomUUID() },
        payload: {
          orderId: order.orderId,
          amount: order.total,
          currency: 'usd',
          source: { card: card(cards.succeeds) },
        },
      })
    // every connection of the pool waits behind the lock; the two further requests wait for a connection
    const answers = await behindTheOrdersLock(order.orderId, poolSize, () =>
      Array.from({ length: poolSize + 2 }, pay),
    )
    const statuses = answers.map((answer) => answer.statusCode).sort()
    expect(statuses).toEqual([201, ...Array(poolSize + 1).fill(409)])
    expect(await orderSummary(provider.url, order.orderId)).toMatchObject({ charges: 1, refunds: 0 })
  })
})

describe('events of one order in one consumer transaction (a run of a fetched batch)', () => {
  it('when the first charges the order and the second asks again, then the second answers with that charge', async () => {
    const data = placedOrder({ token: await providerToken(provider.url, cards.succeeds) })
    const outcomes = await chargedInOneTransaction([data, data])
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['processed', 'already processed'])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 0 })
  })

  it('when the first is declined and the second asks again, then the second answers the decline without a call', async () => {
    const data = placedOrder({ token: await providerToken(provider.url, cards.declined) })
    const outcomes = await chargedInOneTransaction([data, data])
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['failed', 'already failed'])
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 0, failedCharges: 1 })
  })

  it('when neither carries a payment method, then both answer that, and the order awaits its payment once', async () => {
    const data = placedOrder()
    const outcomes = await chargedInOneTransaction([data, data])
    expect(outcomes).toEqual([
      { outcome: 'failed', reason: 'no payment method' },
      { outcome: 'failed', reason: 'no payment method' },
    ])
    const [order] = await payment.sql<{ paymentState: string }[]>`
      select payment_state from orders where order_id = ${data.orderId}`
    expect(order?.paymentState).toBe('payment_failed')
  })
})
