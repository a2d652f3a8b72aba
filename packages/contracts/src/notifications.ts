// The notification resource of the notification service: a user's notifications, made from domain events (an order
// placed, a payment failed, a shipment sent or delivered, a return's steps, a new account), listed with the pagination
// envelope and marked read one by one or many at once (the realtime gateway's notifications:read).
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
  'welcome',
] as const
export type NotificationType = (typeof notificationTypes)[number]
export const NotificationType = StringEnum(notificationTypes, {
  description:
    'order_placed (order.placed), payment_failed (payment.failed), shipment_created (shipment.created), shipment_delivered (shipment.delivered), return_requested (return.requested), return_received (return.received), return_completed (return.completed), return_rejected (return.rejected), welcome (user.registered)',
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
