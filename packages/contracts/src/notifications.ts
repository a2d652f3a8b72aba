// The notification resource of the notification service: a user's notifications, made from domain events (an order
// placed, a payment failed, a shipment sent or delivered, a return's or an exchange's steps, a new account), listed with
// the pagination envelope and marked read one by one or many at once (the realtime gateway's notifications:read).
import { type Static, Type } from 'typebox'
import { pageParameters, QueryObject, sortParameter } from './pagination.ts'
import { Nullable, StringEnum } from './schema-kinds.ts'

/**
 * What a notification is about, and the event that makes it:
 * - `order_placed`: order.placed (to the order's customer)
 * - `payment_failed`: payment.failed
 * - `shipment_created`: shipment.created
 * - `shipment_delivered`: shipment.delivered
 * - `return_requested`, `return_received`, `return_completed`, `return_rejected`: return.* (to the return's customer)
 * - `exchange_requested`, `exchange_awaiting_goods`, `exchange_completed`, `exchange_failed`: exchange.* (to the
 *   exchange's customer; the exchange's own payment.failed and shipment.* carry its id as their orderId and reach the
 *   same customer as payment_failed and shipment_*)
 * - `welcome`: user.registered (to the new user)
 */
export const notificationTypes = [
  'order_placed',
  'payment_failed',
  'shipment_created',
  'shipment_delivered',
  'return_requested',
  'return_received',
  'return_completed',
  'return_rejected',
  'exchange_requested',
  'exchange_awaiting_goods',
  'exchange_completed',
  'exchange_failed',
  'welcome',
] as const
export type NotificationType = (typeof notificationTypes)[number]
export const NotificationType = StringEnum(notificationTypes, {
  description:
    'order_placed (order.placed), payment_failed (payment.failed), shipment_created (shipment.created), shipment_delivered (shipment.delivered), return_requested (return.requested), return_received (return.received), return_completed (return.completed), return_rejected (return.rejected), exchange_requested (exchange.requested), exchange_awaiting_goods (exchange.awaiting_goods), exchange_completed (exchange.completed), exchange_failed (exchange.failed), welcome (user.registered)',
})

const Uuid = Type.String({ format: 'uuid', maxLength: 36 })

/** The spec's real-time notification record, plus readAt. */
export const Notification = Type.Object(
  {
    id: Uuid,
    type: NotificationType,
    title: Type.String({ description: 'short, e.g. Order placed' }),
    message: Type.String({ description: 'one or two sentences for the user' }),
    createdAt: Type.String({
      format: 'date-time',
      maxLength: 64,
      description: 'when what it tells of happened (the time of the event that made it)',
    }),
    readAt: Nullable(
      Type.String({
        format: 'date-time',
        maxLength: 64,
        description: 'when first marked read; null: unread',
      }),
    ),
  },
  { additionalProperties: false },
)
export type Notification = Static<typeof Notification>

/** Fields a list may sort on (`sort=field:asc|desc`). */
export const notificationSortFields = ['createdAt'] as const

/**
 * GET /notifications: page, limit, sort (newest first by default), the unread and type filters, and userId, which
 * only an admin may set to another user's id (a user naming someone else is 403).
 */
export const NotificationListQuery = QueryObject(
  {
    ...pageParameters,
    sort: sortParameter(notificationSortFields, {
      single: true,
      description: 'createdAt:desc (the default, newest first) or createdAt:asc',
    }),
    unread: Type.Optional(
      Type.Boolean({ description: 'true: only unread notifications; false: only read ones; absent: both' }),
    ),
    type: Type.Optional(NotificationType),
    userId: Type.Optional(
      Type.String({
        format: 'uuid',
        maxLength: 36,
        description: "whose notifications: the caller's own when absent; another user's for an admin only",
      }),
    ),
  },
  { additionalProperties: false },
)
export type NotificationListQuery = Static<typeof NotificationListQuery>

export const NotificationIdParams = Type.Object({ id: Uuid })
export type NotificationIdParams = Static<typeof NotificationIdParams>

/** The most ids one PATCH /notifications marks. */
export const maximumNotificationsPerRead = 100

/** PATCH /notifications: the ids to mark read (the realtime gateway's notifications:read sends the same). */
export const MarkNotificationsReadBody = Type.Object(
  {
    notificationIds: Type.Array(Uuid, {
      minItems: 1,
      maxItems: maximumNotificationsPerRead,
      uniqueItems: true,
      description: `1 to ${maximumNotificationsPerRead} distinct notification ids`,
    }),
  },
  { additionalProperties: false },
)
export type MarkNotificationsReadBody = Static<typeof MarkNotificationsReadBody>

/**
 * The answer to PATCH /notifications: the ids of the request that are the caller's and are now read (marked now
 * or before), in the request's order; ids of others' notifications or of none are left out, without a word.
 */
export const MarkNotificationsReadResult = Type.Object(
  {
    success: Type.Literal(true),
    read: Type.Array(Uuid),
  },
  { additionalProperties: false },
)
export type MarkNotificationsReadResult = Static<typeof MarkNotificationsReadResult>

/**
 * The channels a notification of one type reaches its user by: `inApp` (kept in their list), `realtime` (pushed on
 * /notifications as it happens), `email` (a mail to their address). Each is on unless the user turned it off.
 */
export const NotificationChannels = Type.Object(
  {
    inApp: Type.Boolean({ description: 'kept in the list of GET /notifications' }),
    realtime: Type.Boolean({ description: 'pushed on the realtime channel (/notifications)' }),
    email: Type.Boolean({ description: "mailed to the user's address" }),
  },
  { additionalProperties: false },
)
export type NotificationChannels = Static<typeof NotificationChannels>

/** Every notification type with its channels: what GET answers and PUT sets. */
export const NotificationPreferenceSet = Type.Object(
  Object.fromEntries(notificationTypes.map((type) => [type, NotificationChannels])) as {
    [Type in NotificationType]: typeof NotificationChannels
  },
  { additionalProperties: false },
)
export type NotificationPreferenceSet = Static<typeof NotificationPreferenceSet>

/**
 * A user's notification preferences: every type, every channel, on by default. Security mails (a password reset, an
 * address to verify, a password changed) are no notification type and cannot be turned off.
 */
export const NotificationPreferences = Type.Object(
  {
    userId: Uuid,
    preferences: NotificationPreferenceSet,
  },
  { additionalProperties: false },
)
export type NotificationPreferences = Static<typeof NotificationPreferences>

/** One type's channels in a PUT: a channel left out is on. */
const NotificationChannelsUpdate = Type.Partial(NotificationChannels, { additionalProperties: false })

/**
 * PUT /users/{id}/notification-preferences: the user's preferences as a whole. A type left out, or a channel left out
 * of a type, is on: PUT `{"preferences": {}}` turns every channel of every type back on.
 */
export const NotificationPreferencesBody = Type.Object(
  {
    preferences: Type.Partial(
      Type.Object(
        Object.fromEntries(notificationTypes.map((type) => [type, NotificationChannelsUpdate])) as {
          [Type in NotificationType]: typeof NotificationChannelsUpdate
        },
      ),
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)
export type NotificationPreferencesBody = Static<typeof NotificationPreferencesBody>

export const NotificationPreferencesParams = Type.Object({ id: Uuid })
export type NotificationPreferencesParams = Static<typeof NotificationPreferencesParams>

/** The one-click unsubscribe link's query: the signed token a notification mail's List-Unsubscribe carries. */
export const UnsubscribeQuery = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 800,
      // base64url parts joined by a dot: what the mail's link carries, and a URL that stays far under the header limit
      pattern: '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$',
      description: "the token of the mail's List-Unsubscribe link (one that does not verify is 400)",
    }),
  },
  { additionalProperties: false },
)
export type UnsubscribeQuery = Static<typeof UnsubscribeQuery>

/** RFC 8058's one-click body: `List-Unsubscribe=One-Click` (application/x-www-form-urlencoded). */
export const UnsubscribeBody = Type.Object(
  { 'List-Unsubscribe': Type.Literal('One-Click') },
  { additionalProperties: true },
)
export type UnsubscribeBody = Static<typeof UnsubscribeBody>

/** The answer to a one-click unsubscribe: e-mail of that type is off for the token's user. */
export const UnsubscribeResult = Type.Object(
  {
    unsubscribed: Type.Literal(true),
    type: NotificationType,
  },
  { additionalProperties: false },
)
export type UnsubscribeResult = Static<typeof UnsubscribeResult>
