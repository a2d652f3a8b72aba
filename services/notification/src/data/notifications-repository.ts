// Notifications in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open transaction.
// An order's notification finds its user in order_customers (the customers order.placed and exchange.requested tell)
// within its own insert, and each of those two records its customer, makes its own notification and resolves the
// pending notifications of its order (or exchange) in one statement: a consumer's cost is its round trips to
// PostgreSQL.
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
  /** what its mail is rendered from (the template named as its type); null: it has no mail */
  mailData: object | null
}

/** A notification of an order's event: its user is the order's customer, when known. */
export type NewOrderNotification = Omit<NewNotification, 'userId' | 'orderId'> & { orderId: string }

/**
 * Whose "order" an event tells: order.placed's order, or exchange.requested's exchange, whose payment and shipment
 * carry its id as their orderId (order_customers.order_id holds either).
 */
export interface RecordedCustomer {
  orderId: string
  customerId: string
}

export interface CustomerRecordedNotifications {
  /** the event's own notification (order.placed's confirmation); undefined when the event made it before */
  notification: NotificationRecord | undefined
  /** the notifications of the recorded order id that were pending and now have its customer, oldest first */
  resolved: NotificationRecord[]
}

const columns = ['id', 'user_id', 'order_id', 'type', 'title', 'message', 'created_at', 'read_at']

/** The mail data as text, cast to jsonb in SQL (a parameter cast to jsonb directly would be encoded twice). */
const mailDataOf = (notification: { mailData: object | null }): string | null =>
  notification.mailData === null ? null : JSON.stringify(notification.mailData)

const oldestFirst = (a: NotificationRecord, b: NotificationRecord) =>
  a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id)

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
        insert into notifications
          (user_id, order_id, type, title, message, created_at, source_event_id, mail_data)
        values (
          ${notification.userId}, ${notification.orderId}, ${notification.type}, ${notification.title},
          ${notification.message}, ${notification.createdAt}, ${notification.sourceEventId},
          ${mailDataOf(notification)}::text::jsonb
        )
        on conflict (source_event_id) do nothing
        returning ${sql(columns)}`
      return row
    },

    /**
     * The event's notification of an order, for the order's customer when order.placed recorded one (else pending:
     * no user); undefined when the event made one already, as insert.
     */
    async insertForOrder(
      notification: NewOrderNotification,
      sql: Queryable = db,
    ): Promise<NotificationRecord | undefined> {
      const { orderId } = notification
      const [row] = await sql<NotificationRecord[]>`
        insert into notifications (user_id, order_id, type, title, message, created_at, source_event_id, mail_data)
        values (
          (select customer_id from order_customers where order_id = ${orderId}),
          ${orderId}, ${notification.type}, ${notification.title}, ${notification.message},
          ${notification.createdAt}, ${notification.sourceEventId}, ${mailDataOf(notification)}::text::jsonb
        )
        on conflict (source_event_id) do nothing
        returning ${sql(columns)}`
      return row
    },

    /**
     * The notification of an event that tells whose an order id is (order.placed, exchange.requested), in one
     * statement: the customer is recorded as the owner of `recorded.orderId` (the first one recorded stays its owner,
     * should another event ever say otherwise), the notification is inserted for that owner (none when the event made
     * it before; its own orderId is the order it tells of, which for an exchange is not the recorded id), and the
     * recorded id's pending notifications are given to the owner.
     */
    async insertRecordingCustomer(
      notification: NewOrderNotification,
      recorded: RecordedCustomer,
      sql: Queryable = db,
    ): Promise<CustomerRecordedNotifications> {
      const { orderId, customerId } = recorded
      const rows = await sql<(NotificationRecord & { made: 'notification' | 'resolved' })[]>`
        with recorded as (
          insert into order_customers (order_id, customer_id) values (${orderId}, ${customerId})
          on conflict (order_id) do nothing
          returning customer_id
        ),
        owner as materialized (
          select coalesce(
            (select customer_id from recorded),
            (select customer_id from order_customers where order_id = ${orderId})
          ) as user_id
        ),
        inserted as (
          insert into notifications
            (user_id, order_id, type, title, message, created_at, source_event_id, mail_data)
          select owner.user_id, ${notification.orderId}::text, ${notification.type}::text, ${notification.title}::text,
            ${notification.message}::text, ${notification.createdAt}::timestamptz, ${notification.sourceEventId}::text,
            ${mailDataOf(notification)}::text::jsonb
          from owner
          on conflict (source_event_id) do nothing
          returning ${sql(columns)}
        ),
        resolved as (
          update notifications set user_id = (select user_id from owner)
          where order_id = ${orderId} and user_id is null
          returning ${sql(columns)}
        )
        select 'notification' as made, ${sql(columns)} from inserted
        union all
        select 'resolved' as made, ${sql(columns)} from resolved`
      const records = rows.map(({ made, ...record }) => ({ made, record }))
      return {
        notification: records.find(({ made }) => made === 'notification')?.record,
        resolved: records
          .filter(({ made }) => made === 'resolved')
          .map(({ record }) => record)
          .sort(oldestFirst),
      }
    },

    async findById(id: string, sql: Queryable = db): Promise<NotificationRecord | undefined> {
      const [row] = await sql<
        NotificationRecord[]
      >`select ${sql(columns)} from notifications where id = ${id} and in_app`
      return row
    },

    /** Marks the user's notification read now, unless it was already (its first readAt stays); undefined if not theirs. */
    async markRead(id: string, userId: string, sql: Queryable = db): Promise<NotificationRecord | undefined> {
      const [row] = await sql<NotificationRecord[]>`
        update notifications set read_at = coalesce(read_at, now())
        where id = ${id} and user_id = ${userId} and in_app
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
        where id = any(${array}::uuid[]) and user_id = ${userId} and read_at is null and in_app`
      const rows = await sql<{ id: string }[]>`
        select id from notifications where id = any(${array}::uuid[]) and user_id = ${userId} and in_app`
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
