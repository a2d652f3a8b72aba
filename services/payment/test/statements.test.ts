// The statements each event costs payment, counted as they are sent to PostgreSQL (createDatabase's onQuery): those
// of the consumer's transaction and those on the pool (the order and the charge attempt, recorded outside it). Every
// statement a handler awaits is a socket write and two wakeups on each side, the largest cost of a busy consumer, so
// each budget is named here and a change that grows it fails. The consumer's own begin, inbox row and commit (the
// events package's) are not counted: only what the use case sends. The provider is the simulator.
import { randomUUID } from 'node:crypto'
import { createDatabase } from '@meridian/db'
import { createPaymentSimulator, type PaymentSimulator } from '@meridian/infra/payment-simulator'
import { type StatementCounter, statementCounter } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChargeAttemptsRepository } from '../src/data/charge-attempts-repository.ts'
import { createKeyedRefundsRepository } from '../src/data/keyed-refunds-repository.ts'
import { createOrdersRepository } from '../src/data/orders-repository.ts'
import { createPaymentsRepository } from '../src/data/payments-repository.ts'
import { amountRefundRequest, refundAmount } from '../src/domain/amount-refund.ts'
import { chargeOrder, type OrderStepDependencies, refundOrder } from '../src/domain/order-step.ts'
import { buildPaymentTestApp, type PaymentTestApp } from './support/app.ts'
import { cards, orderSummary, providerToken } from './support/provider.ts'

/** order.placed charged: the order's lock with the read of its refund request, charge and order step (together),
 * the order with the charge attempt (pool), the charge recorded with its attempt settled and the order paid, the
 * outbox row */
const chargeBudget = 5
/** order.placed declined: as charged, but the failed payment and the settled attempt, then the order failed */
const declineBudget = 7
/** order.placed again (redelivered under a new id, or payment.requested) when charged: the lock with the read (which
 * finds the order recorded: no write of it on the pool), the order paid, the outbox row */
const chargedAlreadyBudget = 4
/** payment.refund_requested of a charged order: the lock, the request, the charge locked, whether the order's
 * first refund key is taken, the payment refunded, the outbox row */
const refundBudget = 6
/** payment.refund_requested of a return: the lock with the reads of the return's refund and the order's payments
 * (together), the refund recorded with the payment's refunded cents, the outbox row */
const returnRefundBudget = 5
/** ... asked again (refunded already): the lock with the two reads, the outbox row */
const returnRefundedAlreadyBudget = 4

let provider: PaymentSimulator
let payment: PaymentTestApp
let counter: StatementCounter<ReturnType<typeof createDatabase>>
let deps: OrderStepDependencies & Parameters<typeof refundAmount>[0]

beforeAll(async () => {
  provider = await createPaymentSimulator({ port: 0 })
  payment = await buildPaymentTestApp({ STRIPE_API_BASE: provider.url })
  // two connections: the consumer's transaction, and the pool's own statements beside it
  counter = await statementCounter((onQuery) =>
    createDatabase(payment.config.DATABASE_URL, { max: 2, applicationName: 'payment-test-counted', onQuery }),
  )
  deps = {
    payments: createPaymentsRepository(counter.sql),
    orders: createOrdersRepository(counter.sql),
    chargeAttempts: createChargeAttemptsRepository(counter.sql),
    keyedRefunds: createKeyedRefundsRepository(counter.sql),
    provider: payment.provider,
    authenticationTimeoutMs: 600_000,
    // counted too: the same pool (its second connection) stands for the autonomous one
    autonomous: counter.sql,
  }
})

afterAll(async () => {
  await counter?.end()
  await payment?.close()
  await provider?.close()
})

/** The statements `work` sends, in its transaction and on the pool (the charge attempt), without begin and commit. */
const statementsOf: StatementCounter<ReturnType<typeof createDatabase>>['statementsOf'] = (work) =>
  counter.statementsOf(work)

const placed = (token: string) => ({
  orderId: randomUUID(),
  customerId: randomUUID(),
  total: 39.98,
  items: [{ productId: randomUUID(), quantity: 2, price: 19.99 }],
  payment: { token },
})

describe('payment: statements per event (the budgets)', () => {
  it(`when an order is charged, then it costs ${chargeBudget} statements; asked again, ${chargedAlreadyBudget}; refunded, ${refundBudget}`, async () => {
    const data = placed(await providerToken(provider.url, cards.succeeds))
    const charged = await statementsOf((tx) => chargeOrder(deps, data, tx))
    expect(charged, charged.join('\n')).toHaveLength(chargeBudget)
    const again = await statementsOf((tx) => chargeOrder(deps, data, tx))
    expect(again, again.join('\n')).toHaveLength(chargedAlreadyBudget)
    const refunded = await statementsOf((tx) =>
      refundOrder(deps, { orderId: data.orderId, reason: 'out of stock' }, tx),
    )
    expect(refunded, refunded.join('\n')).toHaveLength(refundBudget)
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ charges: 1, refunds: 1 })
  })

  it(`when a return's lines are refunded, then it costs ${returnRefundBudget} statements; asked again, ${returnRefundedAlreadyBudget}`, async () => {
    const data = placed(await providerToken(provider.url, cards.succeeds))
    await statementsOf((tx) => chargeOrder(deps, data, tx))
    const refundKey = `return-${randomUUID()}`
    const asked = amountRefundRequest(
      { orderId: data.orderId, reason: 'return', attempt: 1, refundKey, amount: 19.99 },
      refundKey,
    )
    const refunded = await statementsOf((tx) => refundAmount(deps, asked, tx))
    expect(refunded, refunded.join('\n')).toHaveLength(returnRefundBudget)
    const again = await statementsOf((tx) => refundAmount(deps, { ...asked, attempt: 2 }, tx))
    expect(again, again.join('\n')).toHaveLength(returnRefundedAlreadyBudget)
    expect(await orderSummary(provider.url, data.orderId)).toMatchObject({ refunds: 1, refunded: 1999 })
  })

  it(`when the card is declined, then it costs ${declineBudget} statements`, async () => {
    const data = placed(await providerToken(provider.url, cards.declined))
    const declined = await statementsOf((tx) => chargeOrder(deps, data, tx))
    expect(declined, declined.join('\n')).toHaveLength(declineBudget)
    const [row] = await payment.sql`select status from payments where order_id = ${data.orderId}`
    expect(row).toEqual({ status: 'failed' })
  })
})
