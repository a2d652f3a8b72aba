// Notifications in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open transaction.
import type { NotificationType } from '@meridian/contracts'
import type { ListResult, Queryable } from '@meridian/db'
import { type NotificationListRequest, notificationList } from './notification-columns.ts'

export type { NotificationListRequest }

export interface NotificationRecord {
  id: string
  /** null while pending (its order's customer is not known yet) */
  userId: string | null
  orderId: string | null
  type: NotificationType
  title: string
  message: string
  createdAt: Date
  readAt: Date | null
}

export interface NewNotification {
  userId: string | null
  orderId: string | null
  type: NotificationType
  title: string
  message: string
  createdAt: Date
  sourceEventId: string
}

const columns = ['id', 'user_id', 'order_id', 'type', 'title', 'message', 'created_at', 'read_at']

export function createNotificationsRepository(db: Queryable) {
  return {
    /**
     * The event's notification; undefined when the event made one already (source_event_id is unique: a concurrent
     * insert for the same event waits for the first to commit, then finds it taken).
     */
    async insert(
      notification: NewNotification,
      sql: Queryable = db,
    ): Promise<NotificationRecord | undefined> {
      const [row] = await sql<NotificationRecord[]>`
        insert into notifications ${sql({
          user_id: notification.userId,
          order_id: notification.orderId,
          type: notification.type,
          title: notification.title,
          message: notification.message,
          created_at: notification.createdAt,
          source_event_id: notification.sourceEventId,
        })}
        on conflict (source_event_id) do nothing
        returning ${sql(columns)}`
      return row
    },

    /** Gives the order's pending notifications their user; returns them, oldest first. */
    async assignPendingOfOrder(
      orderId: string,
      userId: string,
      sql: Queryable = db,
    ): Promise<NotificationRecord[]> {
      const rows = await sql<NotificationRecord[]>`
        update notifications set user_id = ${userId}
        where order_id = ${orderId} and user_id is null
        returning ${sql(columns)}`
      return [...rows].sort(
        (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id),
      )
    },

    async findById(id: string, sql: Queryable = db): Promise<NotificationRecord | undefined> {
      const [row] = await sql<
        NotificationRecord[]
      >`select ${sql(columns)} from notifications where id = ${id}`
      return row
    },

    /** Marks the user's notification read now, unless it was already (its first readAt stays); undefined if not theirs. */
    async markRead(id: string, userId: string, sql: Queryable = db): Promise<NotificationRecord | undefined> {
      const [row] = await sql<NotificationRecord[]>`
        update notifications set read_at = coalesce(read_at, now())
        where id = ${id} and user_id = ${userId}
        returning ${sql(columns)}`
      return row
    },

    /**
     * Marks those of `ids` that are the user's and unread as read now; returns every one of `ids` that is the user's
     * (all read now), in no particular order.
     */
    async markManyRead(ids: readonly string[], userId: string, sql: Queryable = db): Promise<string[]> {
      const array = sql.array([...ids])
      await sql`
        update notifications set read_at = now()
        where id = any(${array}::uuid[]) and user_id = ${userId} and read_at is null`
      const rows = await sql<{ id: string }[]>`
        select id from notifications where id = any(${array}::uuid[]) and user_id = ${userId}`
      return rows.map((row) => row.id)
    },

    /** A page of notifications (the request's filters and order) and the total matching it. */
    async list(
      request: NotificationListRequest,
      sql: Queryable = db,
    ): Promise<ListResult<NotificationRecord>> {
      return notificationList.run<NotificationRecord>(sql, request)
    },
  }
}

export type NotificationsRepository = ReturnType<typeof createNotificationsRepository>
