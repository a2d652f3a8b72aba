// Users' password hashes in PostgreSQL: replacing one, which ends the user's password resets in the same statement
// (whoever changes a password, a reset link asked for before must not change it again). SQL only; the hash never
// leaves the service.
import type { Queryable } from '@meridian/db'

export function createUserPasswordsRepository(db: Queryable) {
  return {
    /**
     * Replaces the hash and deletes the user's password resets; like any change of the row, bumps its version (the
     * ETag). False when no user has the id.
     */
    async setPasswordHash(id: string, passwordHash: string, sql: Queryable = db): Promise<boolean> {
      const result = await sql`
        with resets_ended as (delete from password_resets where user_id = ${id})
        update users set password_hash = ${passwordHash}, version = version + 1, updated_at = now()
        where id = ${id}`
      return result.count > 0
    },
  }
}

export type UserPasswordsRepository = ReturnType<typeof createUserPasswordsRepository>
