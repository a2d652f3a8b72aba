// Users' e-mail addresses in PostgreSQL, a projection of auth's user events (the highest version wins) seeded by
// order.placed's customerEmail (version 0: any user event replaces it). A removed user keeps a tombstone without an
// address, and their mails still waiting are given up. SQL only.
import type { Queryable } from '@meridian/db'

export function createUserAddressesRepository(db: Queryable) {
  return {
    /**
     * The address at auth's `version`, unless a newer one is stored or the user was removed; true when written.
     *
     * A row that already holds this version or a newer one (every order.placed of a known customer: version 0) is left
     * alone without being locked: `on conflict do update` locks the conflicting row even when its `where` refuses the
     * update, until the transaction ends, and the consumer's transactions each apply a batch of events, so two batches
     * holding the same customers in another order deadlocked (bench:saga at 100 orders/s, 2026-12-02: 206 deadlocks in
     * 212 s, each batch retried).
     */
    async apply(userId: string, email: string, version: number, sql: Queryable = db): Promise<boolean> {
      const rows = await sql`
        insert into user_addresses (user_id, email, version)
        select ${userId}::uuid, ${email}::text, ${version}::integer
        where not exists (
          select 1 from user_addresses
          where user_id = ${userId}::uuid and (version >= ${version}::integer or removed_at is not null))
        on conflict (user_id) do update set email = excluded.email, version = excluded.version, updated_at = now()
        where user_addresses.version < excluded.version and user_addresses.removed_at is null
        returning user_id`
      return rows.length > 0
    },

    /**
     * The user is gone: the address is forgotten (a tombstone stays, so an older event cannot bring it back) and their
     * pending mails are dead. Returns how many mails were given up.
     */
    async remove(userId: string, sql: Queryable = db): Promise<number> {
      const [, given] = await Promise.all([
        sql`
          insert into user_addresses (user_id, email, version, removed_at) values (${userId}, null, 0, now())
          on conflict (user_id) do update set email = null, removed_at = coalesce(user_addresses.removed_at, now()),
            updated_at = now()`,
        sql`
          update email_deliveries set status = 'dead', last_error = 'the user was removed', finished_at = now()
          where user_id = ${userId} and status = 'pending'
          returning notification_id`,
      ])
      return given.length
    },
  }
}

export type UserAddressesRepository = ReturnType<typeof createUserAddressesRepository>
