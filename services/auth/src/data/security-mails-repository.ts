// Security mails in PostgreSQL (auth's outbox of mails: migration 0009): written in the transaction of what they tell,
// to the user's address as it is then; the sender's statements take due rows (`for update skip locked`, so senders
// in several instances never take the same row), mark them sent or dead (their sealed data erased, when they were
// finished kept) or due later, and remove the rows finished longer ago than the retention (migration 0011). SQL only.
import type { Queryable } from '@meridian/db'

/** A mail ready to be written: its id, template and data, the secret part of its data encrypted. */
export interface PreparedSecurityMail {
  id: string
  template: string
  data: Record<string, unknown>
  /** the encrypted secret data (a link with its token), or null */
  sealedData: string | null
}

/** A due mail as a sender takes it. */
export interface DueSecurityMail {
  id: string
  template: string
  recipient: string
  data: Record<string, unknown>
  sealedData: string | null
  /** sends tried, this one included */
  attempts: number
}

export function createSecurityMailsRepository(db: Queryable) {
  return {
    /** Writes the mail to the user's current address; false when no user has the id. */
    async enqueueFor(userId: string, mail: PreparedSecurityMail, sql: Queryable = db): Promise<boolean> {
      const written = await sql`
        insert into security_mails (id, user_id, template, recipient, data, sealed_data)
        select ${mail.id}, u.id, ${mail.template}, u.email, ${JSON.stringify(mail.data)}::text::jsonb, ${mail.sealedData}
        from users u where u.id = ${userId}`
      return written.count > 0
    },

    /** Writes the mail to another address of the user's (a new address to prove); false when no user has the id. */
    async enqueueTo(
      userId: string,
      recipient: string,
      mail: PreparedSecurityMail,
      sql: Queryable = db,
    ): Promise<boolean> {
      const written = await sql`
        insert into security_mails (id, user_id, template, recipient, data, sealed_data)
        select ${mail.id}, u.id, ${mail.template}, ${recipient}, ${JSON.stringify(mail.data)}::text::jsonb,
          ${mail.sealedData}
        from users u where u.id = ${userId}`
      return written.count > 0
    },

    /**
     * Takes up to `limit` due mails: each counts an attempt and is leased for `leaseMs` (due again then, should this
     * sender die before it marks the row). Rows other senders hold are skipped, not waited for.
     */
    async takeDue(limit: number, leaseMs: number, sql: Queryable = db): Promise<DueSecurityMail[]> {
      return sql<DueSecurityMail[]>`
        with due as (
          select id from security_mails
          where status = 'pending' and next_attempt_at <= now()
          order by next_attempt_at
          limit ${limit}
          for update skip locked
        )
        update security_mails m
        set attempts = m.attempts + 1, next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
        from due
        where m.id = due.id
        returning m.id, m.template, m.recipient, m.data, m.sealed_data as "sealedData", m.attempts`
    },

    /** The mail went out: sent, with the Message-ID it carried; its secret data is erased. */
    async markSent(id: string, messageId: string, sql: Queryable = db): Promise<void> {
      await sql`
        update security_mails
        set status = 'sent', sent_at = now(), finished_at = now(), message_id = ${messageId}, last_error = null,
          sealed_data = null
        where id = ${id} and status = 'pending'`
    },

    /** It failed: due again at `retryAt`, or dead when null (its secret data erased). */
    async markFailed(id: string, error: string, retryAt: Date | null, sql: Queryable = db): Promise<void> {
      await sql`
        update security_mails
        set status = ${retryAt === null ? 'dead' : 'pending'}, last_error = ${error.slice(0, 1000)},
          next_attempt_at = coalesce(${retryAt}::timestamptz, next_attempt_at),
          finished_at = case when ${retryAt}::timestamptz is null then now() end,
          sealed_data = case when ${retryAt}::timestamptz is null then null else sealed_data end
        where id = ${id} and status = 'pending'`
    },

    /**
     * Removes up to `limit` mails finished (sent or dead) more than `retentionDays` ago, oldest first; rows another
     * sender is removing are skipped. How many it removed.
     */
    /** Up to `limit` pending mails with sealed data, oldest first: what a rotation of the secret seals again. */
    async sealedPending(limit: number, sql: Queryable = db): Promise<{ id: string; sealedData: string }[]> {
      return sql<{ id: string; sealedData: string }[]>`
        select id, sealed_data from security_mails
        where status = 'pending' and sealed_data is not null
        order by created_at limit ${limit}`
    },

    /**
     * The mail's data sealed again (SIGNING_KEY_ENCRYPTION_SECRET rotated), only if it is still what was read: a mail
     * sent meanwhile (its data erased) stays as it is. Whether it was written.
     */
    async reseal(id: string, before: string, after: string, sql: Queryable = db): Promise<boolean> {
      const written = await sql`
        update security_mails set sealed_data = ${after} where id = ${id} and sealed_data = ${before}`
      return written.count > 0
    },

    async removeFinished(retentionDays: number, limit: number, sql: Queryable = db): Promise<number> {
      const removed = await sql`
        delete from security_mails where id in (
          select id from security_mails
          where status <> 'pending' and finished_at < now() - ${retentionDays} * interval '1 day'
          order by finished_at
          limit ${limit}
          for update skip locked
        )`
      return removed.count
    },
  }
}

export type SecurityMailsRepository = ReturnType<typeof createSecurityMailsRepository>
