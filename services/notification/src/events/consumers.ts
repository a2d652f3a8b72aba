// Notification's consumers: one typed handler per consumed event type, each a call of a notification use case in the
// consumer's transaction (the one that records the event in the inbox), so the notification, its notification.created
// and the record commit together.
import type { EventType } from '@meridian/contracts'
import { type AnyServiceConsumer, consumer, type EventHandler } from '@meridian/events'
import type { NotificationUseCases } from '../domain/notifications.ts'

/** The consumer group of the notification service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'notification'

/** order.placed: the customer's order_placed, and the order's pending notifications reach them. */
export const onOrderPlaced =
  (notifications: NotificationUseCases): EventHandler<'order.placed'> =>
  async (event, tx) => {
    await notifications.notifyOrderPlaced(event, tx)
  }

/** payment.failed: the order's customer's payment_failed (pending until order.placed when the order is unknown). */
export const onPaymentFailed =
  (notifications: NotificationUseCases): EventHandler<'payment.failed'> =>
  async (event, tx) => {
    await notifications.notifyPaymentFailed(event, tx)
  }

/** shipment.created: the order's customer's shipment_created (pending as payment.failed's). */
export const onShipmentCreated =
  (notifications: NotificationUseCases): EventHandler<'shipment.created'> =>
  async (event, tx) => {
    await notifications.notifyShipmentCreated(event, tx)
  }

/** shipment.delivered: the order's customer's shipment_delivered (pending as payment.failed's). */
export const onShipmentDelivered =
  (notifications: NotificationUseCases): EventHandler<'shipment.delivered'> =>
  async (event, tx) => {
    await notifications.notifyShipmentDelivered(event, tx)
  }

/** user.registered: the new user's welcome. */
export const onUserRegistered =
  (notifications: NotificationUseCases): EventHandler<'user.registered'> =>
  async (event, tx) => {
    await notifications.welcomeUser(event, tx)
  }

export type NotificationEventType =
  | 'order.placed'
  | 'payment.failed'
  | 'shipment.created'
  | 'shipment.delivered'
  | 'user.registered'

export interface NotificationConsumersOptions {
  /** the consumer group; default 'notification' */
  group?: string
  /** topics read instead of the event types, for isolation (tests); a service reads its event types */
  topics?: Partial<Record<NotificationEventType, string>>
}

/** What main.ts hands to eventsPlugin: a consumer of each event type notification reacts to. */
export function notificationConsumers(
  notifications: NotificationUseCases,
  { group = consumerGroup, topics = {} }: NotificationConsumersOptions = {},
): AnyServiceConsumer<NotificationEventType>[] {
  const topicOf = <Type extends NotificationEventType & EventType>(type: Type) =>
    topics[type] === undefined ? {} : { topic: topics[type] }
  return [
    consumer({
      type: 'order.placed',
      group,
      handler: onOrderPlaced(notifications),
      ...topicOf('order.placed'),
    }),
    consumer({
      type: 'payment.failed',
      group,
      handler: onPaymentFailed(notifications),
      ...topicOf('payment.failed'),
    }),
    consumer({
      type: 'shipment.created',
      group,
      handler: onShipmentCreated(notifications),
      ...topicOf('shipment.created'),
    }),
    consumer({
      type: 'shipment.delivered',
      group,
      handler: onShipmentDelivered(notifications),
      ...topicOf('shipment.delivered'),
    }),
    consumer({
      type: 'user.registered',
      group,
      handler: onUserRegistered(notifications),
      ...topicOf('user.registered'),
    }),
  ]
}
