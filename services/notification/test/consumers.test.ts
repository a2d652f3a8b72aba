// Notification's consumers on the real broker: each of the thirteen event types (a return's four and an exchange's four
// among them), published on a topic of this file's own, makes its notification with its notification.created in the
// outbox; a redelivery makes no second one; a payment.failed that comes before its order's order.placed waits pending
// and reaches the customer when the order.placed comes, and the replacements' shipment.created (its orderId the
// exchange's id) that comes before its exchange.requested reaches the customer when that comes. Then each handler as
// the runner calls it: the natural key beyond the inbox, the content, the order lock between an order's (an
// exchange's) events and its order.placed (exchange.requested), and bad events.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import { type CatalogueEvent, createEventProducer, type EventProducer } from '@meridian/events'
import {
  captureLogs,
  eventually,
  freshEventTopics,
  type TestEventTopics,
  testKafka,
  uniqueName,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type NotificationService } from '../src/app.ts'
import { type NotificationEventType, notificationConsumers } from '../src/events/consumers.ts'
import { buildNotificationTestApp, type NotificationTestApp } from './support/app.ts'
import {
  exchangeEvents,
  notificationsOfOrder,
  orderPlaced,
  outboxOf,
  paymentFailed,
  returnEvents,
  shipmentCreated,
  shipmentDelivered,
  userRegistered,
} from './support/notifications.ts'

const eventTypes: NotificationEventType[] = [
  'order.placed',
  'payment.failed',
  'shipment.created',
  'shipment.delivered',
  'return.requested',
  'return.received',
  'return.completed',
  'return.rejected',
  'exchange.requested',
  'exchange.awaiting_goods',
  'exchange.completed',
  'exchange.failed',
  'user.registered',
  'user.profile_changed',
  'user.removed',
  // a replayed dead letter of a mail (email-dead-letters.test.ts)
  'notification.email_requested',
]

let notification: NotificationTestApp
let topics: Record<NotificationEventType, TestEventTopics>
let producer: EventProducer

beforeAll(async () => {
  notification = await buildNotificationTestApp()
  const made = await Promise.all(eventTypes.map((type) => freshEventTopics(type, 3, 1)))
  topics = Object.fromEntries(eventTypes.map((type, index) => [type, made[index]])) as typeof topics
  producer = await createEventProducer(testKafka())
})

afterAll(async () => {
  await producer?.disconnect()
  for (const each of Object.values(topics ?? {})) await each.delete()
  await notification?.close()
})

/** The notification.created records of a user, oldest first. */
async function announcementsOf(userId: string) {
  return (await outboxOf(notification, userId)).filter((row) => row.eventType === 'notification.created')
}

/** The user's stored notifications (pending ones have no user and are not among them), oldest first. */
function notificationsOf(userId: string) {
  return notification.sql<{ id: string; type: string; title: string; message: string; createdAt: Date }[]>`
    select id, type, title, message, created_at from notifications where user_id = ${userId}
    order by created_at, id`
}

describe('the consumers on the broker', () => {
  const publish = async <Type extends NotificationEventType>(event: CatalogueEvent<Type>, key: string) => {
    await producer.publish([
      {
        topic: topics[event.type as NotificationEventType].topic,
        key,
        value: JSON.stringify(event),
        headers: { 'message-id': event.id },
      },
    ])
  }

  let consuming: NotificationService | undefined

  beforeAll(async () => {
    const group = uniqueName('notification')
    const topicNames = Object.fromEntries(eventTypes.map((type) => [type, topics[type].topic]))
    // a second instance on the same database with the app's own backbone: its consumers on this file's topics and
    // group, no relay (the outbox is what the tests read)
    consuming = await buildApp({
      config: notification.config,
      sql: notification.sql,
      redis: notification.redis,
      logStream: captureLogs().stream,
      events: { consumers: { group, topics: topicNames, retryDelaysMs: [200, 200, 200] }, relay: false },
    })
    await consuming.app.ready()
  })

  afterAll(async () => {
    await consuming?.app.close()
  })

  it('when an order is placed, paid in vain, shipped and delivered, then its customer gets each notification with its notification.created; a redelivery adds none', async () => {
    const placed = orderPlaced()
    const { orderId, customerId } = placed.data
    await publish(placed, orderId)
    await eventually(
      'order_placed is announced',
      async () => (await announcementsOf(customerId)).length === 1,
    )

    const failed = paymentFailed(orderId, 'card declined')
    await publish(failed, orderId)
    await eventually(
      'payment_failed is announced',
      async () => (await announcementsOf(customerId)).length === 2,
    )
    const created = shipmentCreated(orderId)
    await publish(created, orderId)
    await eventually(
      'shipment_created is announced',
      async () => (await announcementsOf(customerId)).length === 3,
    )
    const delivered = shipmentDelivered(orderId)
    await publish(delivered, orderId)
    await eventually(
      'shipment_delivered is announced',
      async () => (await announcementsOf(customerId)).length === 4,
    )

    const stored = await notificationsOf(customerId)
    expect(stored.map(({ type, title, message }) => ({ type, title, message }))).toEqual([
      {
        type: 'order_placed',
        title: 'Order placed',
        message: `Your order ${orderId} was placed: 3 items, total 59.97.`,
      },
      {
        type: 'payment_failed',
        title: 'Payment failed',
        message: `The payment for your order ${orderId} failed: card declined.`,
      },
      {
        type: 'shipment_created',
        title: 'Order shipped',
        message: `Your order ${orderId} has shipped with meridian-post (tracking number MP0123456789AB).`,
      },
      {
        type: 'shipment_delivered',
        title: 'Order delivered',
        message: `Your order ${orderId} was delivered on 2026-05-04.`,
      },
    ])
    const announced = await announcementsOf(customerId)
    expect(announced.map((row) => row.payload)).toEqual(
      stored.map((each) =>
        expect.objectContaining({
          type: 'notification.created',
          source: 'notification',
          data: {
            notificationId: each.id,
            userId: customerId,
            type: each.type,
            title: each.title,
            message: each.message,
            createdAt: each.createdAt.toISOString(),
          },
        }),
      ),
    )
    // each notification's time is its event's
    expect(stored.map((each) => each.createdAt.toISOString())).toEqual(
      [placed, failed, created, delivered].map((event) => event.timestamp),
    )

    // payment.failed again (a redelivery), then a marker behind it on the same key and topic (one partition)
    const marker = paymentFailed(orderId, 'marker')
    await publish(failed, orderId)
    await publish(marker, orderId)
    await eventually('the marker is announced', async () => (await announcementsOf(customerId)).length === 5)
    expect((await notificationsOf(customerId)).filter((each) => each.type === 'payment_failed')).toHaveLength(
      2,
    )
  })

  it("when a return is requested, received and completed, and another rejected, then the customer gets each step's notification with its notification.created; a redelivery adds none", async () => {
    const orderId = randomUUID()
    const customerId = randomUUID()
    const returned = returnEvents(orderId, customerId, new Date(Date.now() - 20_000))
    const refused = returnEvents(orderId, customerId, new Date(Date.now() - 10_000))
    const steps = [
      returned.requested,
      returned.received,
      returned.completed,
      refused.requested,
      refused.rejected,
    ]
    for (const [index, event] of steps.entries()) {
      await publish(event, orderId)
      await eventually(
        `${event.type} is announced`,
        async () => (await announcementsOf(customerId)).length === index + 1,
      )
    }
    const stored = await notificationsOf(customerId)
    expect(stored.map(({ type, title }) => ({ type, title }))).toEqual([
      { type: 'return_requested', title: 'Return requested' },
      { type: 'return_received', title: 'Return received' },
      { type: 'return_completed', title: 'Return refunded' },
      { type: 'return_requested', title: 'Return requested' },
      { type: 'return_rejected', title: 'Return rejected' },
    ])
    expect(stored[2]?.message).toBe(
      `Your return ${returned.completed.data.returnId} for order ${orderId} is complete: 39.98 refunded.`,
    )
    expect(stored[4]?.message).toBe(
      `Your return ${refused.rejected.data.returnId} for order ${orderId} was rejected: the goods were worn.`,
    )
    expect((await announcementsOf(customerId)).map((row) => row.payload)).toEqual(
      stored.map((each) =>
        expect.objectContaining({
          type: 'notification.created',
          source: 'notification',
          data: {
            notificationId: each.id,
            userId: customerId,
            type: each.type,
            title: each.title,
            message: each.message,
            createdAt: each.createdAt.toISOString(),
          },
        }),
      ),
    )

    // return.completed again (a redelivery), then a marker behind it on the same key and topic (one partition)
    const marker = returnEvents(orderId, customerId, new Date()).completed
    await publish(returned.completed, orderId)
    await publish(marker, orderId)
    await eventually('the marker is announced', async () => (await announcementsOf(customerId)).length === 6)
    expect(
      (await notificationsOf(customerId)).filter((each) => each.type === 'return_completed'),
    ).toHaveLength(2)
  })

  it("when an exchange is requested, its replacements held and it completes, and another fails, then the customer gets each step's notification with its notification.created", async () => {
    const orderId = randomUUID()
    const customerId = randomUUID()
    const exchanged = exchangeEvents(orderId, customerId, { at: new Date(Date.now() - 20_000) })
    const failing = exchangeEvents(orderId, customerId, {
      at: new Date(Date.now() - 10_000),
      charge: 0,
      refund: 2.5,
    })
    const steps = [
      exchanged.requested,
      exchanged.awaitingGoods,
      exchanged.completed,
      failing.requested,
      failing.failed,
    ]
    for (const [index, event] of steps.entries()) {
      await publish(event, orderId)
      await eventually(
        `${event.type} is announced`,
        async () => (await announcementsOf(customerId)).length === index + 1,
      )
    }
    const stored = await notificationsOf(customerId)
    expect(stored.map(({ type, title }) => ({ type, title }))).toEqual([
      { type: 'exchange_requested', title: 'Exchange requested' },
      { type: 'exchange_awaiting_goods', title: 'Exchange awaiting your items' },
      { type: 'exchange_completed', title: 'Exchange completed' },
      { type: 'exchange_requested', title: 'Exchange requested' },
      { type: 'exchange_failed', title: 'Exchange failed' },
    ])
    expect(stored[0]?.message).toBe(
      `Your exchange ${exchanged.exchangeId} for order ${orderId} was requested: 2 items; a price difference of 5.00 will be charged.`,
    )
    expect(stored[4]?.message).toBe(
      `Your exchange ${failing.exchangeId} for order ${orderId} could not be completed: the replacement is out of stock. Nothing is charged for it: whatever was charged is refunded.`,
    )
    expect((await announcementsOf(customerId)).map((row) => row.payload)).toEqual(
      stored.map((each) =>
        expect.objectContaining({
          type: 'notification.created',
          source: 'notification',
          data: {
            notificationId: each.id,
            userId: customerId,
            type: each.type,
            title: each.title,
            message: each.message,
            createdAt: each.createdAt.toISOString(),
          },
        }),
      ),
    )
  })

  it("when the replacements' shipment.created (the exchange's id as its orderId) comes before exchange.requested, then it waits pending and reaches the customer when exchange.requested comes; the delivery after it reaches them at once", async () => {
    const orderId = randomUUID()
    const customerId = randomUUID()
    const exchange = exchangeEvents(orderId, customerId, { at: new Date(Date.now() - 10_000) })
    const { exchangeId } = exchange
    const shipped = shipmentCreated(exchangeId)
    await publish(shipped, exchangeId)
    await eventually(
      'the pending notification is stored',
      async () => (await notificationsOfOrder(notification, exchangeId)).length === 1,
    )
    const [pending] = await notificationsOfOrder(notification, exchangeId)
    expect(pending).toMatchObject({ userId: null, type: 'shipment_created', sourceEventId: shipped.id })
    expect(await announcementsOf(customerId)).toEqual([])

    await publish(exchange.requested, orderId)
    await eventually('both are announced', async () => (await announcementsOf(customerId)).length === 2)
    expect((await announcementsOf(customerId)).map((row) => row.payload.data.type)).toEqual([
      'exchange_requested',
      'shipment_created',
    ])
    const [resolved] = await notificationsOfOrder(notification, exchangeId)
    expect(resolved).toMatchObject({ id: pending?.id, userId: customerId })

    await publish(shipmentDelivered(exchangeId), exchangeId)
    await eventually(
      'the delivery is announced',
      async () => (await announcementsOf(customerId)).length === 3,
    )
    expect(
      (await notificationsOfOrder(notification, exchangeId)).map(({ userId, type }) => ({ userId, type })),
    ).toEqual([
      { userId: customerId, type: 'shipment_created' },
      { userId: customerId, type: 'shipment_delivered' },
    ])
  })

  it('when a user registers, then a welcome to them (by name, never their e-mail) with its notification.created', async () => {
    const registered = userRegistered({ name: 'Grace Hopper' })
    await publish(registered, registered.data.userId)
    await eventually(
      'the welcome is announced',
      async () => (await announcementsOf(registered.data.userId)).length === 1,
    )
    const [welcome] = await notificationsOf(registered.data.userId)
    expect(welcome).toMatchObject({
      type: 'welcome',
      title: 'Welcome to Meridian',
      message: 'Hello Grace Hopper, welcome to Meridian. Your account is ready.',
    })
    expect(welcome?.message).not.toContain(registered.data.email)
  })

  it('when payment.failed comes before its order.placed, then it waits pending (no user, nothing announced) and reaches the customer when order.placed comes', async () => {
    // the order was placed a second before its payment failed; the events arrive the other way round
    const placed = orderPlaced({}, new Date(Date.now() - 1000))
    const { orderId, customerId } = placed.data
    const failed = paymentFailed(orderId, 'insufficient funds')
    await publish(failed, orderId)
    await eventually(
      'the pending notification is stored',
      async () => (await notificationsOfOrder(notification, orderId)).length === 1,
    )
    const [pending] = await notificationsOfOrder(notification, orderId)
    expect(pending).toMatchObject({ userId: null, type: 'payment_failed', sourceEventId: failed.id })
    expect(await announcementsOf(customerId)).toEqual([])

    await publish(placed, orderId)
    await eventually('both are announced', async () => (await announcementsOf(customerId)).length === 2)
    const stored = await notificationsOfOrder(notification, orderId)
    // in the order the events happened (order.placed was made first), whatever the order they arrived in
    expect(stored.map(({ userId, type }) => ({ userId, type }))).toEqual([
      { userId: customerId, type: 'order_placed' },
      { userId: customerId, type: 'payment_failed' },
    ])
    expect(stored[1]?.id).toBe(pending?.id)
    expect((await announcementsOf(customerId)).map((row) => row.payload.data.type)).toEqual([
      'order_placed',
      'payment_failed',
    ])
  })
})

describe('the consumers main.ts starts', () => {
  const context = { topic: 't', partition: 0, offset: '0', attempt: 1 }
  /** The event applied by the consumer of its type, in a transaction of its own (as the runner does). */
  const handle = async (event: CatalogueEvent<NotificationEventType>) => {
    const each = notificationConsumers(notification.consumerUseCases).find(
      (candidate) => candidate.type === event.type,
    )
    if (!each) throw new Error(`no consumer of ${event.type}`)
    await transaction(notification.sql, (tx) =>
      (each.handler as (...args: unknown[]) => Promise<void>)(event, tx, context),
    )
  }

  it('when listed, then one per event type notification reacts to, all in the notification group; buildApp hands the same to main.ts', () => {
    const consumers = notificationConsumers(notification.consumerUseCases)
    expect(consumers.map(({ type, group, topic }) => ({ type, group, topic }))).toEqual(
      eventTypes.map((type) => ({ type, group: 'notification', topic: undefined })),
    )
    expect(notification.consumers.map(({ type, group }) => ({ type, group }))).toEqual(
      consumers.map(({ type, group }) => ({ type, group })),
    )
  })

  it('when the same event comes again after the inbox forgot it, then no second notification and no second notification.created', async () => {
    const placed = orderPlaced()
    const registered = userRegistered()
    const failed = paymentFailed(placed.data.orderId)
    for (const event of [placed, registered, failed, placed, registered, failed]) await handle(event)
    expect(await notificationsOfOrder(notification, placed.data.orderId)).toHaveLength(2)
    expect(await announcementsOf(placed.data.customerId)).toHaveLength(2)
    expect(await announcementsOf(registered.data.userId)).toHaveLength(1)
  })

  it('when several events of an unknown order come, then all wait pending; its order.placed resolves them all, once', async () => {
    const placed = orderPlaced()
    const { orderId, customerId } = placed.data
    for (const event of [shipmentDelivered(orderId), shipmentCreated(orderId), paymentFailed(orderId)]) {
      await handle(event)
    }
    expect((await notificationsOfOrder(notification, orderId)).map((each) => each.userId)).toEqual([
      null,
      null,
      null,
    ])
    await handle(placed)
    await handle(placed)
    expect(
      (await notificationsOfOrder(notification, orderId)).every((each) => each.userId === customerId),
    ).toBe(true)
    expect(await announcementsOf(customerId)).toHaveLength(4)
    // a pending notification of another order stays pending
    const other = paymentFailed(randomUUID())
    await handle(other)
    expect((await notificationsOfOrder(notification, other.data.orderId)).map((each) => each.userId)).toEqual(
      [null],
    )
  })

  it('when order.placed is applied while an uncommitted payment.failed of its order waits pending, then it waits for it and resolves it', async () => {
    const placed = orderPlaced()
    const failed = paymentFailed(placed.data.orderId)
    const each = notificationConsumers(notification.consumerUseCases).find(
      (candidate) => candidate.type === 'payment.failed',
    )
    if (!each) throw new Error('no consumer of payment.failed')
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let applied = () => {}
    const pendingWritten = new Promise<void>((resolve) => {
      applied = resolve
    })
    // payment.failed's transaction stores the pending notification and stays open
    const first = transaction(notification.sql, async (tx) => {
      await (each.handler as (...args: unknown[]) => Promise<void>)(failed, tx, context)
      applied()
      await held
    })
    await pendingWritten
    const second = handle(placed)
    // order.placed cannot finish before payment.failed commits: it waits for the order's lock
    let finished = false
    void second.then(() => {
      finished = true
    })
    // no pause to see it not finish: it is seen waiting for a lock in PostgreSQL, and then it has not finished
    await eventually('order.placed waits for the order’s lock', async () => {
      const [waiting] = await notification.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`
      return (waiting?.n ?? 0) >= 1
    })
    const raced = finished ? 'finished' : 'waiting'
    release()
    await Promise.all([first, second])
    expect(raced).toBe('waiting')
    expect((await notificationsOfOrder(notification, placed.data.orderId)).map((row) => row.userId)).toEqual([
      placed.data.customerId,
      placed.data.customerId,
    ])
    expect(await announcementsOf(placed.data.customerId)).toHaveLength(2)
  })

  it('when an order.placed and its payment.failed are applied at the same time, then the notification never stays pending', async () => {
    const orders = Array.from({ length: 8 }, () => orderPlaced())
    await Promise.all(
      orders.flatMap((placed) => [handle(placed), handle(paymentFailed(placed.data.orderId))]),
    )
    for (const placed of orders) {
      const stored = await notificationsOfOrder(notification, placed.data.orderId)
      expect(stored.map((each) => each.userId)).toEqual([placed.data.customerId, placed.data.customerId])
      expect(await announcementsOf(placed.data.customerId)).toHaveLength(2)
    }
  })

  it('when free text carries a card number, a token or an e-mail address, then the message does not', async () => {
    const placed = orderPlaced()
    await handle(placed)
    await handle(
      paymentFailed(
        placed.data.orderId,
        'declined for card 4242 4242 4242 4242 (tok_1NXabcDEF) of billing@example.com\n\u0007',
      ),
    )
    const failed = (await notificationsOfOrder(notification, placed.data.orderId)).find(
      (each) => each.type === 'payment_failed',
    )
    expect(failed?.message).toBe(
      `The payment for your order ${placed.data.orderId} failed: declined for card [redacted] ([redacted]) of [redacted].`,
    )
  })

  it("when each of a return's events comes again after the inbox forgot it, then each made one notification for the return's customer and one notification.created", async () => {
    const orderId = randomUUID()
    const customerId = randomUUID()
    const returned = returnEvents(orderId, customerId)
    const events = [returned.requested, returned.received, returned.completed, returned.rejected]
    for (const event of [...events, ...events]) await handle(event)
    const stored = await notificationsOfOrder(notification, orderId)
    expect(stored.map(({ userId, type, sourceEventId }) => ({ userId, type, sourceEventId }))).toEqual(
      events.map((event) => ({
        userId: customerId,
        type: event.type.replace('.', '_'),
        sourceEventId: event.id,
      })),
    )
    expect((await announcementsOf(customerId)).map((row) => row.payload.data.type)).toEqual([
      'return_requested',
      'return_received',
      'return_completed',
      'return_rejected',
    ])
  })

  it("when each of an exchange's events comes again after the inbox forgot it, then each made one notification for the exchange's customer and one notification.created", async () => {
    const orderId = randomUUID()
    const customerId = randomUUID()
    const exchange = exchangeEvents(orderId, customerId)
    const events = [exchange.requested, exchange.awaitingGoods, exchange.completed, exchange.failed]
    for (const event of [...events, ...events]) await handle(event)
    const stored = await notificationsOfOrder(notification, orderId)
    expect(stored.map(({ userId, type, sourceEventId }) => ({ userId, type, sourceEventId }))).toEqual(
      events.map((event) => ({
        userId: customerId,
        type: event.type.replace('.', '_'),
        sourceEventId: event.id,
      })),
    )
    expect((await announcementsOf(customerId)).map((row) => row.payload.data.type)).toEqual([
      'exchange_requested',
      'exchange_awaiting_goods',
      'exchange_completed',
      'exchange_failed',
    ])
  })

  it("when an exchange's declined rise and its replacements' shipment come before exchange.requested, then both wait pending; exchange.requested resolves them, once; a later one reaches the customer at once", async () => {
    const orderId = randomUUID()
    const customerId = randomUUID()
    const exchange = exchangeEvents(orderId, customerId)
    const { exchangeId } = exchange
    await handle(paymentFailed(exchangeId, 'card declined'))
    await handle(shipmentCreated(exchangeId))
    expect((await notificationsOfOrder(notification, exchangeId)).map((each) => each.userId)).toEqual([
      null,
      null,
    ])
    expect(await announcementsOf(customerId)).toEqual([])

    await handle(exchange.requested)
    await handle(exchange.requested)
    expect(
      (await notificationsOfOrder(notification, exchangeId)).map(({ userId, type }) => ({ userId, type })),
    ).toEqual([
      { userId: customerId, type: 'payment_failed' },
      { userId: customerId, type: 'shipment_created' },
    ])
    expect((await announcementsOf(customerId)).map((row) => row.payload.data.type)).toEqual([
      'exchange_requested',
      'payment_failed',
      'shipment_created',
    ])
    const [recorded] = await notification.sql<{ customerId: string }[]>`
      select customer_id from order_customers where order_id = ${exchangeId}`
    expect(recorded?.customerId).toBe(customerId)

    await handle(shipmentDelivered(exchangeId))
    expect((await announcementsOf(customerId)).map((row) => row.payload.data.type)).toEqual([
      'exchange_requested',
      'payment_failed',
      'shipment_created',
      'shipment_delivered',
    ])
    expect(
      (await notificationsOfOrder(notification, exchangeId)).every((each) => each.userId === customerId),
    ).toBe(true)
  })

  it("when exchange.requested and its exchange's payment.failed are applied at the same time, then the notification never stays pending", async () => {
    const exchanges = Array.from({ length: 8 }, () => exchangeEvents(randomUUID(), randomUUID()))
    await Promise.all(
      exchanges.flatMap((exchange) => [
        handle(exchange.requested),
        handle(paymentFailed(exchange.exchangeId)),
      ]),
    )
    for (const exchange of exchanges) {
      const { customerId } = exchange.requested.data
      const stored = await notificationsOfOrder(notification, exchange.exchangeId)
      expect(stored.map((each) => each.userId)).toEqual([customerId])
      expect(await announcementsOf(customerId)).toHaveLength(2)
    }
  })

  it("when an exchange's customer id is not a uuid, then the handler fails (retried, then dead-lettered) and nothing is written, its id recorded for no one", async () => {
    const orderId = randomUUID()
    const exchange = exchangeEvents(orderId, 'customer-42')
    await expect(handle(exchange.requested)).rejects.toThrow(/not a uuid/)
    await expect(handle(exchange.failed)).rejects.toThrow(/not a uuid/)
    expect(await notificationsOfOrder(notification, orderId)).toEqual([])
    const [stored] =
      await notification.sql`select 1 from order_customers where order_id = ${exchange.exchangeId}`
    expect(stored).toBeUndefined()
  })

  it("when a return's customer id is not a uuid, then the handler fails (retried, then dead-lettered) and nothing is written", async () => {
    const orderId = randomUUID()
    const { requested } = returnEvents(orderId, 'customer-42')
    await expect(handle(requested)).rejects.toThrow(/not a uuid/)
    expect(await notificationsOfOrder(notification, orderId)).toEqual([])
  })

  it('when an id is not a uuid, then the handler fails (the runner retries, then dead-letters) and nothing is written', async () => {
    const placed = orderPlaced({ customerId: 'customer-42' })
    await expect(handle(placed)).rejects.toThrow(/not a uuid/)
    expect(await notificationsOfOrder(notification, placed.data.orderId)).toEqual([])
    const [stored] =
      await notification.sql`select 1 from order_customers where order_id = ${placed.data.orderId}`
    expect(stored).toBeUndefined()
  })
})
