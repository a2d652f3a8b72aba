// Data factories of the notification tests: the events notification consumes, notifications made through the use
// cases (as the consumers make them), and what the outbox holds for a user.
import { randomUUID } from 'node:crypto'
import type { EventData, Notification } from '@meridian/contracts'
import { transaction } from '@meridian/db'
import { type CatalogueEvent, createEvent } from '@meridian/events'
import { presentNotification } from '../../src/domain/notifications.ts'
import type { NotificationTestApp } from './app.ts'

/** order.placed of a new order of `customerId`: two lines, three units, 59.97 in all. */
export const orderPlaced = (
  overrides: Partial<EventData<'order.placed'>> = {},
  now?: Date,
): CatalogueEvent<'order.placed'> =>
  createEvent(
    'order.placed',
    {
      orderId: randomUUID(),
      customerId: randomUUID(),
      total: 59.97,
      items: [
        { productId: randomUUID(), quantity: 2, price: 19.99 },
        { productId: randomUUID(), quantity: 1, price: 19.99 },
      ],
      ...overrides,
    },
    { source: 'order', ...(now ? { now } : {}) },
  )

export const paymentFailed = (orderId: string, reason = 'card declined') =>
  createEvent('payment.failed', { orderId, reason }, { source: 'payment' })

export const shipmentCreated = (orderId: string) =>
  createEvent(
    'shipment.created',
    { orderId, shipmentId: randomUUID(), carrier: 'meridian-post', trackingNumber: 'MP0123456789AB' },
    { source: 'shipping' },
  )

export const shipmentDelivered = (orderId: string) =>
  createEvent(
    'shipment.delivered',
    { orderId, shipmentId: randomUUID(), deliveredAt: '2026-05-04T10:11:12.000Z' },
    { source: 'shipping' },
  )

/**
 * The four events of one return of `orderId` by `customerId` (two units, 39.98 refunded), a second apart from `at`
 * (default: four seconds ago) in the order requested, received, completed, rejected.
 */
export function returnEvents(orderId: string, customerId: string, at = new Date(Date.now() - 4000)) {
  const returnId = randomUUID()
  const items = [{ productId: randomUUID(), quantity: 2 }]
  const second = (index: number) => ({ source: 'order', now: new Date(at.getTime() + index * 1000) })
  return {
    requested: createEvent(
      'return.requested',
      {
        returnId,
        orderId,
        customerId,
        items: items.map((item) => ({ ...item, price: 19.99, name: 'Mug' })),
        refundAmount: 39.98,
        reason: 'too small',
      },
      second(0),
    ),
    received: createEvent('return.received', { returnId, orderId, customerId, items }, second(1)),
    completed: createEvent(
      'return.completed',
      { returnId, orderId, customerId, refundAmount: 39.98, paymentId: randomUUID() },
      second(2),
    ),
    rejected: createEvent(
      'return.rejected',
      { returnId, orderId, customerId, reason: 'the goods were worn' },
      second(3),
    ),
  }
}

/**
 * The four events of one exchange of `orderId` by `customerId` (two mugs for two large ones, a rise of `charge` or a
 * fall of `refund`: default a rise of 5.00), a second apart from `at` (default: four seconds ago) in the order
 * requested, awaiting_goods, completed, failed. The exchange's own payment and shipment carry `exchangeId` as their
 * orderId.
 */
export function exchangeEvents(
  orderId: string,
  customerId: string,
  { at = new Date(Date.now() - 4000), charge = 5, refund = 0 } = {},
) {
  const exchangeId = randomUUID()
  const items = [{ productId: randomUUID(), quantity: 2 }]
  const second = (index: number) => ({ source: 'order', now: new Date(at.getTime() + index * 1000) })
  return {
    exchangeId,
    requested: createEvent(
      'exchange.requested',
      {
        exchangeId,
        orderId,
        customerId,
        items: items.map((item) => ({
          ...item,
          price: 12.5,
          name: 'Mug',
          replacementProductId: randomUUID(),
          replacementPrice: 15,
          replacementName: 'Large mug',
        })),
        charge,
        refund,
      },
      second(0),
    ),
    awaitingGoods: createEvent(
      'exchange.awaiting_goods',
      { exchangeId, orderId, customerId, items },
      second(1),
    ),
    completed: createEvent(
      'exchange.completed',
      { exchangeId, orderId, customerId, charge, refund, shipmentId: randomUUID() },
      second(2),
    ),
    failed: createEvent(
      'exchange.failed',
      { exchangeId, orderId, customerId, reason: 'the replacement is out of stock', failedStep: 'reserve' },
      second(3),
    ),
  }
}

export const userRegistered = (overrides: Partial<EventData<'user.registered'>> = {}, now?: Date) =>
  createEvent(
    'user.registered',
    {
      userId: randomUUID(),
      email: `someone.${randomUUID().slice(0, 8)}@example.com`,
      name: 'Ada Lovelace',
      role: 'user',
      ...overrides,
    },
    { source: 'auth', ...(now ? { now } : {}) },
  )

/** A notification of `userId` made as the consumers make them: a welcome at `at` (default now). */
export async function createTestNotification(
  notification: NotificationTestApp,
  userId: string,
  at?: Date,
): Promise<Notification> {
  const outcome = await transaction(notification.sql, (tx) =>
    notification.notifications.welcomeUser(userRegistered({ userId }, at), tx),
  )
  if (outcome.outcome !== 'created') throw new Error(`no notification made: ${outcome.outcome}`)
  return presentNotification(outcome.notification)
}

/** `count` notifications of the user, a second apart, oldest first. */
export async function createTestNotifications(
  notification: NotificationTestApp,
  userId: string,
  count: number,
): Promise<Notification[]> {
  const start = Date.now() - count * 1000
  const made: Notification[] = []
  for (let index = 0; index < count; index += 1) {
    made.push(await createTestNotification(notification, userId, new Date(start + index * 1000)))
  }
  return made
}

export interface OutboxRow {
  eventType: string
  aggregateId: string
  payload: { id: string; type: string; source: string; data: Record<string, unknown> }
}

/** The outbox rows of a user (notification.created is keyed by its user), oldest first. */
export function outboxOf(notification: NotificationTestApp, userId: string): Promise<OutboxRow[]> {
  return notification.sql<OutboxRow[]>`
    select event_type, aggregate_id, payload from outbox where aggregate_id = ${userId} order by id`
}

export interface StoredNotification {
  id: string
  userId: string | null
  orderId: string | null
  type: string
  title: string
  message: string
  sourceEventId: string
}

/** The stored notifications an order's events made, oldest first. */
export function notificationsOfOrder(
  notification: NotificationTestApp,
  orderId: string,
): Promise<StoredNotification[]> {
  return notification.sql<StoredNotification[]>`
    select id, user_id, order_id, type, title, message, source_event_id
    from notifications where order_id = ${orderId} order by created_at, id`
}
