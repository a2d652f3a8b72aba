// The statements each event costs notification in its consumer's transaction, counted as they are sent to
// PostgreSQL (createDatabase's onQuery): every statement a handler awaits is a socket write and two wakeups on each
// side, the largest cost of a busy consumer, so each budget is named here and a change that grows it fails. The
// consumer's own begin, inbox row and commit (the events package's) are not counted: only what the use case sends.
import { randomUUID } from 'node:crypto'
import { createDatabase } from '@meridian/db'
import { type StatementCounter, statementCounter } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildNotificationTestApp, type NotificationTestApp } from './support/app.ts'
import {
  exchangeEvents,
  notificationsOfOrder,
  orderPlaced,
  returnEvents,
  shipmentCreated,
  userRegistered,
} from './support/notifications.ts'

// Every notification that reaches its user costs one statement for its channels (the user's preferences for its type
// read, the notification kept out of the list when in-app is off, its mail row written when e-mail is on), then its
// notification.created when realtime is on.
/** order.placed: the order's lock, one statement (customer recorded, confirmation made, pending ones resolved), the
 * confirmation's channels and notification.created; and the same two for each pending notification resolved */
const orderPlacedBudget = 4
/** statements order.placed adds for each pending notification it resolves: its channels and notification.created */
const perResolved = 2
/** shipment.created (payment.failed, shipment.delivered): the order's lock, the notification (which finds the
 * order's customer itself), its channels and notification.created */
const orderEventBudget = 4
/** the same, before the order's order.placed: the lock and the pending notification, nothing announced */
const pendingBudget = 2
/** user.registered: the welcome, its channels and notification.created */
const welcomeBudget = 3
/** return.* (each of the four): the notification for the customer the event names, its channels and
 * notification.created */
const returnEventBudget = 3
/** exchange.requested: as order.placed, for the exchange's id (its lock, one statement that records the customer,
 * makes the notification and resolves the pending ones, the notification's channels and notification.created), and
 * the same two for each pending notification resolved */
const exchangeRequestedBudget = 4
/** exchange.awaiting_goods, exchange.completed, exchange.failed: as return.* */
const exchangeEventBudget = 3

let notification: NotificationTestApp
let counter: StatementCounter<ReturnType<typeof createDatabase>>

beforeAll(async () => {
  notification = await buildNotificationTestApp()
  counter = await statementCounter((onQuery) =>
    createDatabase(notification.config.DATABASE_URL, {
      max: 1,
      applicationName: 'notification-test-counted',
      onQuery,
    }),
  )
})

afterAll(async () => {
  await counter?.end()
  await notification?.close()
})

const statementsOf: StatementCounter<ReturnType<typeof createDatabase>>['statementsOf'] = (work) =>
  counter.statementsOf(work)

describe('notification: statements per event (the budgets)', () => {
  it(`when an order is placed and then shipped, then order.placed costs ${orderPlacedBudget} statements and shipment.created ${orderEventBudget}`, async () => {
    const placed = orderPlaced()
    const { orderId, customerId } = placed.data
    const onPlaced = await statementsOf((tx) => notification.notifications.notifyOrderPlaced(placed, tx))
    expect(onPlaced, onPlaced.join('\n')).toHaveLength(orderPlacedBudget)
    const onShipped = await statementsOf((tx) =>
      notification.notifications.notifyShipmentCreated(shipmentCreated(orderId), tx),
    )
    expect(onShipped, onShipped.join('\n')).toHaveLength(orderEventBudget)
    const made = await notificationsOfOrder(notification, orderId)
    expect(made.map((each) => [each.type, each.userId])).toEqual([
      ['order_placed', customerId],
      ['shipment_created', customerId],
    ])
  })

  it(`when an order's event comes before its order.placed, then it costs ${pendingBudget} statements, and order.placed ${perResolved} more for it`, async () => {
    const placed = orderPlaced()
    const { orderId, customerId } = placed.data
    const pending = await statementsOf((tx) =>
      notification.notifications.notifyShipmentCreated(shipmentCreated(orderId), tx),
    )
    expect(pending, pending.join('\n')).toHaveLength(pendingBudget)
    const onPlaced = await statementsOf((tx) => notification.notifications.notifyOrderPlaced(placed, tx))
    expect(onPlaced, onPlaced.join('\n')).toHaveLength(orderPlacedBudget + perResolved)
    const made = await notificationsOfOrder(notification, orderId)
    expect(made.map((each) => each.userId)).toEqual([customerId, customerId])
  })

  it(`when a user registers, then the welcome costs ${welcomeBudget} statements`, async () => {
    const statements = await statementsOf((tx) =>
      notification.notifications.welcomeUser(userRegistered(), tx),
    )
    expect(statements, statements.join('\n')).toHaveLength(welcomeBudget)
  })

  it(`when a return is requested, received, completed or rejected, then each costs ${returnEventBudget} statements`, async () => {
    const orderId = randomUUID()
    const customerId = randomUUID()
    const returned = returnEvents(orderId, customerId)
    const { notifications } = notification
    const costs = [
      await statementsOf((tx) => notifications.notifyReturnRequested(returned.requested, tx)),
      await statementsOf((tx) => notifications.notifyReturnReceived(returned.received, tx)),
      await statementsOf((tx) => notifications.notifyReturnCompleted(returned.completed, tx)),
      await statementsOf((tx) => notifications.notifyReturnRejected(returned.rejected, tx)),
    ]
    for (const statements of costs) expect(statements, statements.join('\n')).toHaveLength(returnEventBudget)
    expect((await notificationsOfOrder(notification, orderId)).map((each) => each.userId)).toEqual(
      Array.from({ length: 4 }, () => customerId),
    )
  })

  it(`when an exchange is requested after its replacements shipped, then it costs ${exchangeRequestedBudget} statements and ${perResolved} more for the shipment; each later step ${exchangeEventBudget}`, async () => {
    const orderId = randomUUID()
    const customerId = randomUUID()
    const exchange = exchangeEvents(orderId, customerId)
    const { notifications } = notification
    const pending = await statementsOf((tx) =>
      notifications.notifyShipmentCreated(shipmentCreated(exchange.exchangeId), tx),
    )
    expect(pending, pending.join('\n')).toHaveLength(pendingBudget)
    const onRequested = await statementsOf((tx) =>
      notifications.notifyExchangeRequested(exchange.requested, tx),
    )
    expect(onRequested, onRequested.join('\n')).toHaveLength(exchangeRequestedBudget + perResolved)
    const costs = [
      await statementsOf((tx) => notifications.notifyExchangeAwaitingGoods(exchange.awaitingGoods, tx)),
      await statementsOf((tx) => notifications.notifyExchangeCompleted(exchange.completed, tx)),
      await statementsOf((tx) => notifications.notifyExchangeFailed(exchange.failed, tx)),
    ]
    for (const statements of costs)
      expect(statements, statements.join('\n')).toHaveLength(exchangeEventBudget)
    const made = [
      ...(await notificationsOfOrder(notification, orderId)),
      ...(await notificationsOfOrder(notification, exchange.exchangeId)),
    ]
    expect(made.map((each) => each.userId)).toEqual(Array.from({ length: 5 }, () => customerId))
  })
})
