// The users projection in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open
// transaction. A write carries auth's version of the user and changes nothing when the stored one is newer.
import type { Queryable } from '@meridian/db'

export interface UserRecord {
  id: string
  name: string
  email: string
  role: string
  status: string
  version: number
}

/** A user's state as one of auth's events (or auth's answer) tells it. */
export type UserState = UserRecord

const columns = ['id', 'name', 'email', 'role', 'status', 'version']

export function createUsersRepository(db: Queryable) {
  return {
    /**
     * Writes the state unless the stored version is as new or newer, or the user was removed; true when written.
     * Version 0 (a seed from the user's own token) never replaces anything.
     */
    async apply(user: UserState, sql: Queryable = db): Promise<boolean> {
      const rows = await sql`
        insert into users ${sql({ ...user, updated_at: new Date() })}
        on conflict (id) do update set
          name = excluded.name, email = excluded.email, role = excluded.role, status = excluded.status,
          version = excluded.version, updated_at = excluded.updated_at
        where users.version < excluded.version and users.removed_at is null
        returning id`
      return rows.length > 0
    },

    /** Marks the user removed (kept as a tombstone; inserted as one when never seen) and deletes their posts. */
    async remove(id: string, sql: Queryable = db): Promise<void> {
      await sql`
        insert into users (id, name, email, role, status, version, removed_at)
        values (${id}, '', '', '', 'removed', 0, now())
        on conflict (id) do update set removed_at = coalesce(users.removed_at, now()), updated_at = now()`
      await sql`delete from posts where author_id = ${id}`
    },

    /** The user, unless unknown or removed. */
    async findById(id: string, sql: Queryable = db): Promise<UserRecord | undefined> {
      const [row] = await sql<UserRecord[]>`
        select ${sql(columns)} from users where id = ${id} and removed_at is null`
      return row
    },

    /**
     * The user, unless unknown or removed, held (FOR SHARE) until the transaction ends: a removal, which updates the
     * row, waits for it — so a post is never written beside a removal that deletes the user's posts.
     */
    async holdActive(id: string, tx: Queryable): Promise<UserRecord | undefined> {
      const [row] = await tx<UserRecord[]>`
        select ${tx(columns)} from users where id = ${id} and removed_at is null for share`
      return row
    },

    /** The users among `ids` that exist (in no particular order): one statement for any number. */
    async findByIds(ids: readonly string[], sql: Queryable = db): Promise<UserRecord[]> {
      if (ids.length === 0) return []
      return sql<UserRecord[]>`
        select ${sql(columns)} from users where id = any(${ids as string[]}::uuid[]) and removed_at is null`
    },
  }
}

export type UsersRepository = ReturnType<typeof createUsersRepository>
