// Notification use cases: making a user's notification from a domain event (pending while the order's customer is not
// known, resolved by that order's order.placed, or by exchange.requested for the exchange's own payment and shipment;
// a return's and an exchange's events name their customer), reading and listing a user's notifications, and marking
// them read. A notification that reaches its user, its mail row and its notification.created commit in one transaction
// (outbox), each as the user's preferences for its type allow.
import { AppError, type EventData, type Notification, type NotificationListQuery } from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { Principal } from '@meridian/service-kit'
import type { EmailDeliveriesRepository } from '../data/email-deliveries-repository.ts'
import { notificationList } from '../data/notification-columns.ts'
import type { NotificationRecord, NotificationsRepository } from '../data/notifications-repository.ts'
import type { OrderCustomersRepository } from '../data/order-customers-repository.ts'
import { isAdmin, isUuid, listOwnerOf, mayRead, recipientOf } from './access.ts'
import {
  exchangeAwaitingGoodsMailData,
  exchangeCompletedMailData,
  exchangeFailedMailData,
  exchangeRequestedMailData,
  orderPlacedMailData,
  paymentFailedMailData,
  returnCompletedMailData,
  returnReceivedMailData,
  returnRejectedMailData,
  returnRequestedMailData,
  shipmentCreatedMailData,
  shipmentDeliveredMailData,
  welcomeMailData,
} from './notification-mails.ts'
import {
  exchangeAwaitingGoods,
  exchangeCompleted,
  exchangeFailed,
  exchangeRequested,
  type NotificationContent,
  orderPlaced,
  paymentFailed,
  returnCompleted,
  returnReceived,
  returnRejected,
  returnRequested,
  shipmentCreated,
  shipmentDelivered,
  welcome,
} from './notification-messages.ts'

/** The name notification signs its events with (the envelope's source). */
export const serviceSource = 'notification'

/** What a use case needs of the event it answers: its id (the notification's natural key), time and data. */
export interface SourceEvent<Data> {
  id: string
  timestamp: string
  data: Data
}

/** What a notification looks like to clients: ISO timestamps, readAt null while unread. */
export function presentNotification(record: NotificationRecord): Notification {
  return {
    id: record.id,
    type: record.type,
    title: record.title,
    message: record.message,
    createdAt: record.createdAt.toISOString(),
    readAt: record.readAt === null ? null : record.readAt.toISOString(),
  }
}

export type NotifyOutcome =
  /** made and announced (notification.created appended) */
  | { outcome: 'created'; notification: NotificationRecord }
  /** made, but its order's customer is not known yet: it waits for the order's order.placed (or exchange.requested) */
  | { outcome: 'pending'; notification: NotificationRecord }
  /** the event made its notification before (a redelivery): nothing done */
  | { outcome: 'already notified' }

/** What an event that tells an order's customer (order.placed, exchange.requested) led to. */
export interface CustomerRecordedOutcome {
  /** its own notification (order.placed's order_placed, exchange.requested's exchange_requested) */
  notified: NotifyOutcome
  /** the order's (the exchange's) notifications that were pending and reached the customer now */
  resolved: NotificationRecord[]
}

export interface NotificationUseCasesDependencies {
  notifications: NotificationsRepository
  orderCustomers: OrderCustomersRepository
  deliveries: EmailDeliveriesRepository
}

/** What a notification says, and what its mail is rendered from (the template named as its type). */
export type MadeNotification = NotificationContent & { mailData: object }

/** An id the producer would never send is a bad event (retried, then dead-lettered), not a notification. */
function assertUserId(userId: string, what: string): string {
  if (!isUuid(userId)) throw new Error(`${what} '${userId}' is not a uuid`)
  return userId.toLowerCase()
}

/** The event's time, or now when the producer's is not a time (the schema checks its format, not its range). */
function timeOf(event: SourceEvent<unknown>): Date {
  const time = new Date(event.timestamp)
  return Number.isNaN(time.getTime()) ? new Date() : time
}

/**
 * A notification that has its user reaches them by the channels their preferences leave on for its type: kept out of
 * their list when in-app is off, a mail row when e-mail is on (the sender mails it later), and notification.created
 * (the realtime push) when realtime is on. All in the caller's transaction.
 */
async function reach(
  deliveries: EmailDeliveriesRepository,
  notification: NotificationRecord,
  tx: TransactionSql,
): Promise<void> {
  const { userId } = notification
  if (userId === null) throw new Error(`notification ${notification.id} has no user to announce to`)
  const channels = await deliveries.reach({ id: notification.id, userId, type: notification.type }, tx)
  if (!channels.realtime) return
  const created = createEvent(
    'notification.created',
    {
      notificationId: notification.id,
      userId,
      type: notification.type,
      title: notification.title,
      message: notification.message,
      createdAt: notification.createdAt.toISOString(),
    },
    { source: serviceSource },
  )
  await appendToOutbox(tx, created, { aggregateId: userId })
}

/** What the event's insert leads to: reaching its user when it has one, pending when not, nothing when made before. */
async function settle(
  deliveries: EmailDeliveriesRepository,
  inserted: NotificationRecord | undefined,
  tx: TransactionSql,
): Promise<NotifyOutcome> {
  if (!inserted) return { outcome: 'already notified' }
  if (inserted.userId === null) return { outcome: 'pending', notification: inserted }
  await reach(deliveries, inserted, tx)
  return { outcome: 'created', notification: inserted }
}

/** A notification's content and its mail's data, both from the event's data. */
const made =
  <Data>(content: (data: Data) => NotificationContent, mail: (data: Data) => object) =>
  (data: Data): MadeNotification => ({ ...content(data), mailData: mail(data) })

/** What each event type's notification says, and what its mail is rendered from. */
const madeOf = {
  orderPlaced: made(orderPlaced, orderPlacedMailData),
  paymentFailed: made(paymentFailed, paymentFailedMailData),
  shipmentCreated: made(shipmentCreated, shipmentCreatedMailData),
  shipmentDelivered: made(shipmentDelivered, shipmentDeliveredMailData),
  returnRequested: made(returnRequested, returnRequestedMailData),
  returnReceived: made(returnReceived, returnReceivedMailData),
  returnCompleted: made(returnCompleted, returnCompletedMailData),
  returnRejected: made(returnRejected, returnRejectedMailData),
  exchangeRequested: made(exchangeRequested, exchangeRequestedMailData),
  exchangeAwaitingGoods: made(exchangeAwaitingGoods, exchangeAwaitingGoodsMailData),
  exchangeCompleted: made(exchangeCompleted, exchangeCompletedMailData),
  exchangeFailed: made(exchangeFailed, exchangeFailedMailData),
  welcome: made(welcome, welcomeMailData),
}

/**
 * The three ways an event becomes its user's notification, by what it tells of the customer: an order's event finds
 * them (or waits pending), an event that names them reaches them, and an event that tells whose an order is records
 * them and resolves what waited.
 */
function notifiersOf({ notifications, orderCustomers, deliveries }: NotificationUseCasesDependencies) {
  const settled = (inserted: NotificationRecord | undefined, tx: TransactionSql) =>
    settle(deliveries, inserted, tx)

  /**
   * An order's event (payment.failed, shipment.*): for the order's customer when order.placed told who that is (for an
   * exchange's own payment and shipment, whose orderId is the exchange's id: exchange.requested); otherwise stored
   * pending, never dropped, until that event arrives (under the order's lock, so the two cannot pass each other). The
   * lock and the insert, which finds the customer itself, go out together.
   */
  async function notifyAboutOrder(
    event: SourceEvent<{ orderId: string }>,
    content: MadeNotification,
    tx: TransactionSql,
  ): Promise<NotifyOutcome> {
    const { orderId } = event.data
    const [, inserted] = await Promise.all([
      orderCustomers.lockOrder(orderId, tx),
      notifications.insertForOrder(
        { orderId, ...content, createdAt: timeOf(event), sourceEventId: event.id },
        tx,
      ),
    ])
    return settled(inserted, tx)
  }

  /**
   * An event that names its customer (return.*, exchange.*): for that customer (never pending), about the order it
   * names. The notification and its notification.created go out one after the other.
   */
  async function notifyNamedCustomer(
    event: SourceEvent<{ orderId: string; customerId: string }>,
    content: MadeNotification,
    tx: TransactionSql,
  ): Promise<NotifyOutcome> {
    const { orderId } = event.data
    const userId = assertUserId(event.data.customerId, `customer id of order ${orderId}`)
    const inserted = await notifications.insert(
      { userId, orderId, ...content, createdAt: timeOf(event), sourceEventId: event.id },
      tx,
    )
    return settled(inserted, tx)
  }

  /**
   * An event that tells whose `recordedId` is (order.placed of its order; exchange.requested of the exchange, whose
   * own payment.failed and shipment.* carry its id as their orderId and would otherwise wait for an order.placed that
   * never comes): records the customer, makes the event's notification for them, and gives them the pending
   * notifications of `recordedId` (each announced now), all in the caller's transaction. The lock of `recordedId` (the
   * one its events take) and the one statement that writes all three go out together.
   */
  async function notifyRecordingCustomer(
    recordedId: string,
    event: SourceEvent<{ orderId: string; customerId: string }>,
    content: MadeNotification,
    tx: TransactionSql,
  ): Promise<CustomerRecordedOutcome> {
    const customerId = assertUserId(event.data.customerId, `customer id of order ${event.data.orderId}`)
    const [, recorded] = await Promise.all([
      orderCustomers.lockOrder(recordedId, tx),
      notifications.insertRecordingCustomer(
        { orderId: event.data.orderId, ...content, createdAt: timeOf(event), sourceEventId: event.id },
        { orderId: recordedId, customerId },
        tx,
      ),
    ])
    const notified = await settled(recorded.notification, tx)
    for (const each of recorded.resolved) await reach(deliveries, each, tx)
    return { notified, resolved: recorded.resolved }
  }

  return { notifyAboutOrder, notifyNamedCustomer, notifyRecordingCustomer }
}

export function createNotificationUseCases(dependencies: NotificationUseCasesDependencies) {
  const { notifications, deliveries } = dependencies
  const { notifyAboutOrder, notifyNamedCustomer, notifyRecordingCustomer } = notifiersOf(dependencies)

  return {
    /**
     * order.placed: records the order's customer, confirms the order to them, and gives them the order's pending
     * notifications (each announced now).
     */
    notifyOrderPlaced: (event: SourceEvent<EventData<'order.placed'>>, tx: TransactionSql) =>
      notifyRecordingCustomer(event.data.orderId, event, madeOf.orderPlaced(event.data), tx),

    notifyPaymentFailed: (event: SourceEvent<EventData<'payment.failed'>>, tx: TransactionSql) =>
      notifyAboutOrder(event, madeOf.paymentFailed(event.data), tx),

    notifyShipmentCreated: (event: SourceEvent<EventData<'shipment.created'>>, tx: TransactionSql) =>
      notifyAboutOrder(event, madeOf.shipmentCreated(event.data), tx),

    notifyShipmentDelivered: (event: SourceEvent<EventData<'shipment.delivered'>>, tx: TransactionSql) =>
      notifyAboutOrder(event, madeOf.shipmentDelivered(event.data), tx),

    notifyReturnRequested: (event: SourceEvent<EventData<'return.requested'>>, tx: TransactionSql) =>
      notifyNamedCustomer(event, madeOf.returnRequested(event.data), tx),

    notifyReturnReceived: (event: SourceEvent<EventData<'return.received'>>, tx: TransactionSql) =>
      notifyNamedCustomer(event, madeOf.returnReceived(event.data), tx),

    notifyReturnCompleted: (event: SourceEvent<EventData<'return.completed'>>, tx: TransactionSql) =>
      notifyNamedCustomer(event, madeOf.returnCompleted(event.data), tx),

    notifyReturnRejected: (event: SourceEvent<EventData<'return.rejected'>>, tx: TransactionSql) =>
      notifyNamedCustomer(event, madeOf.returnRejected(event.data), tx),

    /**
     * exchange.requested: the exchange's customer hears of it, and is recorded as the customer of the exchange's own
     * id, so the exchange's payment.failed (a declined rise) and shipment.* (the replacements) reach them, those
     * that came before it included.
     */
    notifyExchangeRequested: (event: SourceEvent<EventData<'exchange.requested'>>, tx: TransactionSql) =>
      notifyRecordingCustomer(event.data.exchangeId, event, madeOf.exchangeRequested(event.data), tx),

    notifyExchangeAwaitingGoods: (
      event: SourceEvent<EventData<'exchange.awaiting_goods'>>,
      tx: TransactionSql,
    ) => notifyNamedCustomer(event, madeOf.exchangeAwaitingGoods(event.data), tx),

    notifyExchangeCompleted: (event: SourceEvent<EventData<'exchange.completed'>>, tx: TransactionSql) =>
      notifyNamedCustomer(event, madeOf.exchangeCompleted(event.data), tx),

    notifyExchangeFailed: (event: SourceEvent<EventData<'exchange.failed'>>, tx: TransactionSql) =>
      notifyNamedCustomer(event, madeOf.exchangeFailed(event.data), tx),

    /** user.registered: the new user's welcome. */
    async welcomeUser(
      event: SourceEvent<EventData<'user.registered'>>,
      tx: TransactionSql,
    ): Promise<NotifyOutcome> {
      const userId = assertUserId(event.data.userId, 'user id')
      const inserted = await notifications.insert(
        {
          userId,
          orderId: null,
          ...madeOf.welcome(event.data),
          createdAt: timeOf(event),
          sourceEventId: event.id,
        },
        tx,
      )
      return settle(deliveries, inserted, tx)
    },

    /** The notification, if the principal may read it; another user's is a 404 (its existence is not told). */
    async getNotification(id: string, principal: Principal): Promise<Notification> {
      const notification = await notifications.findById(id)
      if (!notification || !mayRead(principal, notification.userId)) {
        throw AppError.notFound(`Notification ${id} not found`)
      }
      return presentNotification(notification)
    },

    /**
     * A page of one user's notifications as the list envelope, newest first unless sorted otherwise: the caller's
     * own, or (an admin) the user the query names. The links keep the path the client used.
     */
    async listNotifications(
      query: NotificationListQuery,
      principal: Principal,
      path: string,
    ): Promise<ListEnvelope<Notification>> {
      const owner = listOwnerOf(principal, query.userId)
      const request = notificationList.parse({ ...query, userId: owner ?? undefined, inApp: true })
      // a caller who owns no notifications (a client) sees an empty list
      const { rows, total } = owner === null ? { rows: [], total: 0 } : await notifications.list(request)
      return listEnvelope(path, query, request, rows.map(presentNotification), total)
    },

    /**
     * Marks the caller's notification read (reading it again keeps the first readAt). Only its user marks it: another
     * user's is a 404, as for reading; an admin, who may read it, is 403.
     */
    async markRead(id: string, principal: Principal): Promise<Notification> {
      const userId = recipientOf(principal)
      const marked = userId === null ? undefined : await notifications.markRead(id, userId)
      if (marked) return presentNotification(marked)
      if (isAdmin(principal) && (await notifications.findById(id))) throw AppError.forbidden()
      throw AppError.notFound(`Notification ${id} not found`)
    },

    /**
     * Marks those of `ids` that are the caller's read; returns them (marked now or before), in the request's order.
     * Ids of other users' notifications, or of none, are left out silently: the answer tells nothing about them.
     */
    async markManyRead(ids: readonly string[], principal: Principal): Promise<string[]> {
      const userId = recipientOf(principal)
      const wanted = [...new Set(ids.map((id) => id.toLowerCase()))]
      if (userId === null || wanted.length === 0) return []
      const read = new Set(await notifications.markManyRead(wanted, userId))
      return wanted.filter((id) => read.has(id))
    },
  }
}

export type NotificationUseCases = ReturnType<typeof createNotificationUseCases>
