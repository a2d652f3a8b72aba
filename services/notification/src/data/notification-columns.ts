// The notifications table's columns by API field, and its list (sort, filters): data-layer facts that the repository
// builds SQL from and the list query's parsing checks requests against.
import { defineList, type ListRequestOf } from '@meridian/db'

/** API field -> column. The only names that ever reach SQL as identifiers. */
export const notificationColumns = {
  id: 'id',
  userId: 'user_id',
  orderId: 'order_id',
  type: 'type',
  title: 'title',
  message: 'message',
  createdAt: 'created_at',
  readAt: 'read_at',
  unread: 'unread',
  inApp: 'in_app',
} as const

/** Every field of the record: the list has no sparse fieldset. */
const notificationFields = [
  'id',
  'userId',
  'orderId',
  'type',
  'title',
  'message',
  'createdAt',
  'readAt',
] as const

/**
 * GET /notifications: newest first, the unread and type filters of the query, and userId, which the use case always
 * sets (the caller's own, or the user an admin asked for), so a list never spans users and never shows a pending
 * notification (its user_id is null, which equals nothing); and inApp, which the use case always sets to true, so a
 * notification whose type the user keeps out of the app is never listed.
 */
export const notificationList = defineList({
  table: 'notifications',
  columns: notificationColumns,
  selectable: notificationFields,
  sortable: ['createdAt'],
  filterable: ['userId', 'unread', 'type', 'inApp'],
  defaultSort: 'createdAt:desc',
  // no sparse fieldset: every field of the record, always
  alwaysSelected: notificationFields,
})

export type NotificationListRequest = ListRequestOf<typeof notificationList>
