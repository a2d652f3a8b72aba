// Address verifications in PostgreSQL (migration 0010): a link's token stored as its SHA-256 with the address it
// proves and its purpose; writing one deletes the user's older ones of the same purpose, using one deletes it (a
// second use, or a concurrent one, finds nothing), and proving an address marks it verified only while it is still
// the user's. SQL only.
import type { Queryable } from '@meridian/db'
import { type UserRecord, userPublicColumns } from './users-repository.ts'

export type VerificationPurpose = 'verify' | 'change'

/** What using a token found. */
export interface UsedVerification {
  userId: string
  email: string
  purpose: VerificationPurpose
  live: boolean
}

export function createEmailVerificationsRepository(db: Queryable) {
  return {
    /** Writes a verification of `email` for the user, superseding their older ones of the same purpose. */
    async issue(
      verification: {
        userId: string
        email: string
        purpose: VerificationPurpose
        tokenHash: string
        ttlMs: number
      },
      sql: Queryable = db,
    ): Promise<void> {
      const { userId, email, purpose, tokenHash, ttlMs } = verification
      await sql`
        with superseded as (
          delete from email_verifications where user_id = ${userId} and purpose = ${purpose}
        )
        insert into email_verifications (token_hash, user_id, email, purpose, expires_at)
        values (${tokenHash}, ${userId}, ${email}, ${purpose}, now() + ${ttlMs} * interval '1 millisecond')`
    },

    /** Deletes the verification of this token hash (single use) and tells what it was; undefined when none. */
    async use(tokenHash: string, sql: Queryable = db): Promise<UsedVerification | undefined> {
      const [used] = await sql<UsedVerification[]>`
        delete from email_verifications where token_hash = ${tokenHash}
        returning user_id as "userId", email, purpose, expires_at > now() as live`
      return used
    },

    /** Marks the user's address verified if it is still `email`; the user as changed, else undefined. */
    async markVerified(userId: string, email: string, sql: Queryable = db): Promise<UserRecord | undefined> {
      const [row] = await sql<UserRecord[]>`
        update users set email_verified = true, version = version + 1, updated_at = now()
        where id = ${userId} and email = ${email}
        returning ${sql(userPublicColumns)}`
      return row
    },

    /** Sets the user's address to `email`, verified (it was proved by the link); undefined when the user is gone. */
    async changeAddress(userId: string, email: string, sql: Queryable = db): Promise<UserRecord | undefined> {
      const [row] = await sql<UserRecord[]>`
        update users set email = ${email}, email_verified = true, version = version + 1, updated_at = now()
        where id = ${userId}
        returning ${sql(userPublicColumns)}`
      return row
    },

    /** Removes the verifications that expired (the mail sender round's housekeeping); how many. */
    async deleteExpired(sql: Queryable = db): Promise<number> {
      const result = await sql`delete from email_verifications where expires_at <= now()`
      return result.count
    },
  }
}

export type EmailVerificationsRepository = ReturnType<typeof createEmailVerificationsRepository>
