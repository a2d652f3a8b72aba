// Notification's consumers: one typed handler per consumed event type, each a call of a notification use case in the
// consumer's transaction (the one that records the event in the inbox), so the notification, its mail row, its
// notification.created and the record commit together; auth's user events keep the users' addresses; a replayed dead
// letter of a mail makes it pending again.
import {
  type AnyServiceConsumer,
  type ConsumersOptions,
  consumersOf,
  type EventHandler,
} from '@meridian/events'
import type { EmailDeadLetters } from '../domain/email-dead-letters.ts'
import type { NotificationUseCases } from '../domain/notifications.ts'
import type { UserAddressUseCases } from '../domain/user-addresses.ts'

/**
 * What the consumers call: the notification use cases, the users' addresses (where their mails go), and the retry of
 * a mail given up.
 */
export interface NotificationConsumerUseCases {
  notifications: NotificationUseCases
  addresses: UserAddressUseCases
  emails: Pick<EmailDeadLetters, 'retry'>
}

/** The consumer group of the notification service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'notification'

/**
 * order.placed: the customer's address when the order carries it (before the notifications, which may be mailed), the
 * customer's order_placed, and the order's pending notifications reach them.
 */
export const onOrderPlaced =
  ({ notifications, addresses }: NotificationConsumerUseCases): EventHandler<'order.placed'> =>
  async (event, tx) => {
    await addresses.recordOrderEmail(event.data, tx)
    await notifications.notifyOrderPlaced(event, tx)
  }

/**
 * payment.failed: the order's customer's payment_failed (pending until order.placed when the order is unknown; an
 * exchange's declined rise, whose orderId is the exchange's id, until exchange.requested).
 */
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

/** return.requested: the return's customer's return_requested. */
export const onReturnRequested =
  (notifications: NotificationUseCases): EventHandler<'return.requested'> =>
  async (event, tx) => {
    await notifications.notifyReturnRequested(event, tx)
  }

/** return.received: the return's customer's return_received. */
export const onReturnReceived =
  (notifications: NotificationUseCases): EventHandler<'return.received'> =>
  async (event, tx) => {
    await notifications.notifyReturnReceived(event, tx)
  }

/** return.completed: the return's customer's return_completed (the amount refunded). */
export const onReturnCompleted =
  (notifications: NotificationUseCases): EventHandler<'return.completed'> =>
  async (event, tx) => {
    await notifications.notifyReturnCompleted(event, tx)
  }

/** return.rejected: the return's customer's return_rejected (the reason). */
export const onReturnRejected =
  (notifications: NotificationUseCases): EventHandler<'return.rejected'> =>
  async (event, tx) => {
    await notifications.notifyReturnRejected(event, tx)
  }

/**
 * exchange.requested: the exchange's customer's exchange_requested (the price difference), and the exchange's id
 * recorded as theirs: its payment.failed and shipment.* carry that id as their orderId, and those pending reach them.
 */
export const onExchangeRequested =
  (notifications: NotificationUseCases): EventHandler<'exchange.requested'> =>
  async (event, tx) => {
    await notifications.notifyExchangeRequested(event, tx)
  }

/** exchange.awaiting_goods: the exchange's customer's exchange_awaiting_goods (the units to send back). */
export const onExchangeAwaitingGoods =
  (notifications: NotificationUseCases): EventHandler<'exchange.awaiting_goods'> =>
  async (event, tx) => {
    await notifications.notifyExchangeAwaitingGoods(event, tx)
  }

/** exchange.completed: the exchange's customer's exchange_completed (the amount refunded or charged). */
export const onExchangeCompleted =
  (notifications: NotificationUseCases): EventHandler<'exchange.completed'> =>
  async (event, tx) => {
    await notifications.notifyExchangeCompleted(event, tx)
  }

/** exchange.failed: the exchange's customer's exchange_failed (the reason). */
export const onExchangeFailed =
  (notifications: NotificationUseCases): EventHandler<'exchange.failed'> =>
  async (event, tx) => {
    await notifications.notifyExchangeFailed(event, tx)
  }

/** user.registered: the new user's address and their welcome. */
export const onUserRegistered =
  ({ notifications, addresses }: NotificationConsumerUseCases): EventHandler<'user.registered'> =>
  async (event, tx) => {
    await addresses.recordRegistered(event.data, tx)
    await notifications.welcomeUser(event, tx)
  }

/** user.profile_changed: the user's address at that version (a newer one known stays). */
export const onUserProfileChanged =
  ({ addresses }: NotificationConsumerUseCases): EventHandler<'user.profile_changed'> =>
  async (event, tx) => {
    await addresses.recordProfileChanged(event.data, tx)
  }

/** user.removed: the address forgotten, the user's mails still waiting given up. */
export const onUserRemoved =
  ({ addresses }: NotificationConsumerUseCases): EventHandler<'user.removed'> =>
  async (event, tx) => {
    await addresses.forgetUser(event.data, tx)
  }

/**
 * notification.email_requested: only ever an operator's replay of a mail's dead letter (the service publishes it to
 * the .dlt alone), so the mail is pending again if it is dead, and its sender sends it once.
 */
export const onEmailRequested =
  ({ emails }: NotificationConsumerUseCases): EventHandler<'notification.email_requested'> =>
  async (event, tx) => {
    await emails.retry(event.data, tx)
  }

export type NotificationEventType =
  | 'order.placed'
  | 'payment.failed'
  | 'shipment.created'
  | 'shipment.delivered'
  | 'return.requested'
  | 'return.received'
  | 'return.completed'
  | 'return.rejected'
  | 'exchange.requested'
  | 'exchange.awaiting_goods'
  | 'exchange.completed'
  | 'exchange.failed'
  | 'user.registered'
  | 'user.profile_changed'
  | 'user.removed'
  | 'notification.email_requested'

export type NotificationConsumersOptions = ConsumersOptions<NotificationEventType>

/** What the app's event backbone runs: a consumer of each event type notification reacts to. */
export function notificationConsumers(
  useCases: NotificationConsumerUseCases,
  options?: NotificationConsumersOptions,
): AnyServiceConsumer<NotificationEventType>[] {
  const { notifications } = useCases
  return consumersOf(
    consumerGroup,
    {
      'order.placed': onOrderPlaced(useCases),
      'payment.failed': onPaymentFailed(notifications),
      'shipment.created': onShipmentCreated(notifications),
      'shipment.delivered': onShipmentDelivered(notifications),
      'return.requested': onReturnRequested(notifications),
      'return.received': onReturnReceived(notifications),
      'return.completed': onReturnCompleted(notifications),
      'return.rejected': onReturnRejected(notifications),
      'exchange.requested': onExchangeRequested(notifications),
      'exchange.awaiting_goods': onExchangeAwaitingGoods(notifications),
      'exchange.completed': onExchangeCompleted(notifications),
      'exchange.failed': onExchangeFailed(notifications),
      'user.registered': onUserRegistered(useCases),
      'user.profile_changed': onUserProfileChanged(useCases),
      'user.removed': onUserRemoved(useCases),
      'notification.email_requested': onEmailRequested(useCases),
    },
    options,
  )
}
