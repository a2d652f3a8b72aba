// Notifications' channels and their mails in PostgreSQL. `reach` applies the user's preferences to a notification that
// has its user, in one statement: kept out of the list when in-app is off, a mail row written when e-mail is on (and
// the notification has mail data). The sender's statements take due rows (`for update skip locked`, so senders in
// several instances never take the same row), and mark them sent, due again later, or dead (when they were finished
// kept); a dead one is made pending again when an operator replays its dead letter; the rows finished longer ago than
// the retention are removed (migration 0005). SQL only.
import type { NotificationType } from '@meridian/contracts'
import type { Queryable } from '@meridian/db'

export interface Reached {
  /** whether notification.created is to be published (the realtime channel is on) */
  realtime: boolean
  /** whether a mail row was written now */
  email: boolean
  inApp: boolean
}

/** A due mail as a sender takes it: the notification's type and mail data, and the recipient's address now. */
export interface DueEmail {
  notificationId: string
  userId: string
  type: NotificationType
  mailData: unknown
  /** sends tried, this one included */
  attempts: number
  /** null when no address is known (yet) for the user */
  address: string | null
  /** whether the user was removed */
  removed: boolean
}

export function createEmailDeliveriesRepository(db: Queryable) {
  return {
    async reach(
      notification: { id: string; userId: string; type: NotificationType },
      sql: Queryable = db,
    ): Promise<Reached> {
      const [row] = await sql<Reached[]>`
        with chosen as materialized (
          select coalesce(p.in_app, true) as in_app, coalesce(p.realtime, true) as realtime,
            coalesce(p.email, true) as email
          from (select 1) as one
          left join notification_preferences p on p.user_id = ${notification.userId} and p.type = ${notification.type}
        ),
        hidden as (
          update notifications set in_app = false
          where id = ${notification.id} and not (select in_app from chosen)
          returning id
        ),
        mailed as (
          insert into email_deliveries (notification_id, user_id)
          select n.id, ${notification.userId}::uuid from notifications n, chosen
          where n.id = ${notification.id} and n.mail_data is not null and chosen.email
          on conflict (notification_id) do nothing
          returning notification_id
        )
        select chosen.realtime, chosen.in_app as "inApp", exists (select 1 from mailed) as email from chosen`
      if (!row) throw new Error(`notification ${notification.id}: its channels were not read`)
      return row
    },

    /**
     * Takes up to `limit` due mails: each counts an attempt and is leased for `leaseMs` (due again then, should this
     * sender die before it marks the row). Rows other senders hold are skipped, not waited for.
     */
    async takeDue(limit: number, leaseMs: number, sql: Queryable = db): Promise<DueEmail[]> {
      return sql<DueEmail[]>`
        with due as (
          select notification_id from email_deliveries
          where status = 'pending' and next_attempt_at <= now()
          order by next_attempt_at
          limit ${limit}
          for update skip locked
        )
        update email_deliveries d
        set attempts = d.attempts + 1, next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
        from due
        join notifications n on n.id = due.notification_id
        left join user_addresses a on a.user_id = n.user_id
        where d.notification_id = due.notification_id
        returning d.notification_id as "notificationId", d.user_id as "userId", n.type, n.mail_data as "mailData",
          d.attempts, a.email as address, coalesce(a.removed_at is not null, false) as removed`
    },

    /** The mail went out: sent, with the Message-ID it carried. */
    async markSent(notificationId: string, messageId: string, sql: Queryable = db): Promise<void> {
      await sql`
        update email_deliveries
        set status = 'sent', sent_at = now(), finished_at = now(), message_id = ${messageId}, last_error = null
        where notification_id = ${notificationId} and status = 'pending'`
    },

    /** It failed: due again at `retryAt`, or dead when null. False when the row was not pending (nothing changed). */
    async markFailed(
      notificationId: string,
      error: string,
      retryAt: Date | null,
      sql: Queryable = db,
    ): Promise<boolean> {
      const changed = await sql`
        update email_deliveries
        set status = ${retryAt === null ? 'dead' : 'pending'}, last_error = ${error.slice(0, 1000)},
          next_attempt_at = coalesce(${retryAt}::timestamptz, next_attempt_at),
          finished_at = case when ${retryAt}::timestamptz is null then now() end
        where notification_id = ${notificationId} and status = 'pending'`
      return changed.count > 0
    },

    /**
     * A dead mail pending again, due now with its attempts counted afresh (its last error kept until it is sent).
     * False when it is not dead: a mail sent stays sent, a pending one is left to its sender.
     */
    async revive(notificationId: string, sql: Queryable = db): Promise<boolean> {
      const changed = await sql`
        update email_deliveries set status = 'pending', attempts = 0, next_attempt_at = now(), finished_at = null
        where notification_id = ${notificationId} and status = 'dead'`
      return changed.count > 0
    },

    /**
     * Removes up to `limit` mail rows finished (sent or dead) more than `retentionDays` ago, oldest first (their
     * notifications stay); rows another sender is removing are skipped. How many it removed.
     */
    async removeFinished(retentionDays: number, limit: number, sql: Queryable = db): Promise<number> {
      const removed = await sql`
        delete from email_deliveries where notification_id in (
          select notification_id from email_deliveries
          where status <> 'pending' and finished_at < now() - ${retentionDays} * interval '1 day'
          order by finished_at
          limit ${limit}
          for update skip locked
        )`
      return removed.count
    },
  }
}

export type EmailDeliveriesRepository = ReturnType<typeof createEmailDeliveriesRepository>
