// Password resets in PostgreSQL (migration 0009): asking for one is a single statement that does the same work
// whether or not an active user has the address (it writes the reset and its mail only when one does, and answers
// nothing either way), and using one deletes it (a second use, or a concurrent one, finds nothing). Tokens are
// stored as their SHA-256 only. SQL only.
import type { Queryable } from '@meridian/db'
import type { PreparedSecurityMail } from './security-mails-repository.ts'

/** What using a token found: its user, whether it was still live, and whether the user may still sign in. */
export interface UsedReset {
  userId: string
  live: boolean
  active: boolean
}

export function createPasswordResetsRepository(db: Queryable) {
  return {
    /**
     * For the active user with this (normalised) address, if there is one: deletes their older resets (a newer link
     * supersedes them), writes the new one and its mail. Nothing is read back: the caller cannot tell, and so cannot
     * answer differently, whether anyone has the address.
     */
    async request(
      reset: { email: string; tokenHash: string; ttlMs: number; mail: PreparedSecurityMail },
      sql: Queryable = db,
    ): Promise<void> {
      const { mail } = reset
      await sql`
        with target as (
          select id, email from users where email = ${reset.email} and status = 'active'
        ),
        superseded as (
          delete from password_resets where user_id in (select id from target)
        ),
        written as (
          insert into password_resets (token_hash, user_id, expires_at)
          select ${reset.tokenHash}, id, now() + ${reset.ttlMs} * interval '1 millisecond' from target
        ),
        mailed as (
          insert into security_mails (id, user_id, template, recipient, data, sealed_data)
          select ${mail.id}, id, ${mail.template}, email, ${JSON.stringify(mail.data)}::text::jsonb,
            ${mail.sealedData}
          from target
        )
        select 1 where false`
    },

    /** Deletes the reset of this token hash (single use) and tells what it was; undefined when there was none. */
    async use(tokenHash: string, sql: Queryable = db): Promise<UsedReset | undefined> {
      const [used] = await sql<UsedReset[]>`
        with used as (
          delete from password_resets where token_hash = ${tokenHash}
          returning user_id, expires_at
        )
        select used.user_id as "userId", used.expires_at > now() as live, u.status = 'active' as active
        from used join users u on u.id = used.user_id`
      return used
    },

    /** Removes the resets that expired (the sender round's housekeeping); how many. */
    async deleteExpired(sql: Queryable = db): Promise<number> {
      const result = await sql`delete from password_resets where expires_at <= now()`
      return result.count
    },
  }
}

export type PasswordResetsRepository = ReturnType<typeof createPasswordResetsRepository>
