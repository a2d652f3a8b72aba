// Credential revocations in PostgreSQL (migration 0006): SQL only; when they are written and delivered is
// domain/credential-revocation.ts's.
import type { CredentialRevocation } from '@meridian/contracts'
import type { Queryable } from '@meridian/db'

/** A revocation as stored: the record the services follow, and its row. */
export interface StoredRevocation extends CredentialRevocation {
  id: string
}

interface RevocationRow {
  id: string
  userId: string
  revokedBefore: Date
  until: Date
}

const stored = (row: RevocationRow): StoredRevocation => ({
  id: row.id,
  userId: row.userId,
  revokedBefore: row.revokedBefore.getTime(),
  until: row.until.getTime(),
})

export function createCredentialRevocationsRepository(db: Queryable) {
  return {
    /** Writes the revocation, undelivered; in the caller's transaction so it commits with the change it voids. */
    async insert(revocation: CredentialRevocation, sql: Queryable = db): Promise<StoredRevocation> {
      const [row] = await sql<{ id: string }[]>`
        insert into credential_revocations (user_id, revoked_before, until)
        values (${revocation.userId}, ${new Date(revocation.revokedBefore)}, ${new Date(revocation.until)})
        returning id::text as id`
      if (!row) throw new Error('the credential revocation was not written')
      return { id: row.id, ...revocation }
    },

    /**
     * Up to `limit` undelivered revocations still in force, oldest first, locked for the caller's transaction:
     * another instance's round skips them rather than waits.
     */
    async lockUndelivered(limit: number, now: Date, sql: Queryable = db): Promise<StoredRevocation[]> {
      const rows = await sql<RevocationRow[]>`
        select id::text as id, user_id::text as user_id, revoked_before, until
        from credential_revocations
        where delivered_at is null and until > ${now}
        order by id
        limit ${limit}
        for update skip locked`
      return rows.map(stored)
    },

    async markDelivered(ids: readonly string[], now: Date, sql: Queryable = db): Promise<void> {
      if (ids.length === 0) return
      await sql`
        update credential_revocations set delivered_at = ${now}
        where id = any(${sql.array(ids as string[])}::bigint[]) and delivered_at is null`
    },

    /**
     * Every revocation still in force made undelivered again, for the round to deliver anew: Redis came back without
     * some it had taken (see the revoker's redeliverInForce). Returns how many.
     */
    async markInForceUndelivered(now: Date, sql: Queryable = db): Promise<number> {
      const result = await sql`
        update credential_revocations set delivered_at = null
        where until > ${now} and delivered_at is not null`
      return result.count
    },

    /** The instant before which the user's credentials no longer count (ms); 0 when no revocation is in force. */
    async latestRevokedBefore(userId: string, now: Date, sql: Queryable = db): Promise<number> {
      const [row] = await sql<{ revokedBefore: Date }[]>`
        select revoked_before from credential_revocations
        where user_id = ${userId} and until > ${now}
        order by revoked_before desc
        limit 1`
      return row ? row.revokedBefore.getTime() : 0
    },

    /** Removes revocations that void nothing any more (everything they covered has expired); returns how many. */
    async deleteLapsed(now: Date, sql: Queryable = db): Promise<number> {
      const result = await sql`delete from credential_revocations where until <= ${now}`
      return result.count
    },
  }
}

export type CredentialRevocationsRepository = ReturnType<typeof createCredentialRevocationsRepository>
