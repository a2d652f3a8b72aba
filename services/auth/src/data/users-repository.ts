// Users in PostgreSQL: SQL only, plain objects out; every function takes the pool or an open transaction.
import type { User, UserField, UserRole, UserStatus } from '@meridian/contracts'
import type { ListResult, ListRow, Queryable } from '@meridian/db'
import { type UserListRequest, userColumns, userList } from './user-columns.ts'

export type { UserListRequest }

export interface UserRecord extends Omit<User, 'createdAt' | 'updatedAt'> {
  version: number
  createdAt: Date
  updatedAt: Date
}

/**
 * What signing in needs: the public fields plus the password hash (never leaves the service). No hash: an invited
 * user, who has no password yet.
 */
export interface UserCredentials {
  id: string
  name: string
  email: string
  role: UserRole
  status: UserStatus
  passwordHash: string | null
  emailVerified: boolean
}

export interface NewUser {
  name: string
  email: string
  /** null only for an invited user (the table refuses it otherwise) */
  passwordHash: string | null
  role: UserRole
  status: UserStatus
  age: number | null
}

export interface UserChanges {
  name?: string
  email?: string
  role?: UserRole
  status?: UserStatus
  age?: number | null
}

/** The columns a user is read with (never the password hash). */
export const userPublicColumns = [
  'id',
  'name',
  'email',
  'email_verified',
  'role',
  'status',
  'age',
  'version',
  'created_at',
  'updated_at',
]
const publicColumns = userPublicColumns

export function createUsersRepository(db: Queryable) {
  return {
    async insert(user: NewUser, sql: Queryable = db): Promise<UserRecord> {
      const [row] = await sql<UserRecord[]>`
        insert into users ${sql({
          name: user.name,
          email: user.email,
          password_hash: user.passwordHash,
          role: user.role,
          status: user.status,
          age: user.age,
        })}
        returning ${sql(publicColumns)}`
      if (!row) throw new Error('insert into users returned no row')
      return row
    },

    async findById(id: string, sql: Queryable = db): Promise<UserRecord | undefined> {
      const [row] = await sql<UserRecord[]>`select ${sql(publicColumns)} from users where id = ${id}`
      return row
    },

    async findCredentialsByEmail(email: string, sql: Queryable = db): Promise<UserCredentials | undefined> {
      const [row] = await sql<UserCredentials[]>`
        select id, name, email, role, status, password_hash, email_verified from users where email = ${email}`
      return row
    },

    /** A page of the users list (sparse: only the request's fields) and the total matching it. */
    list(request: UserListRequest, sql: Queryable = db): Promise<ListResult<ListRow<UserRecord, 'id'>>> {
      return userList.run<UserRecord>(sql, request)
    },

    /** Applies the changes; with `expectedVersion` only if the row still has it. Undefined when no row matched. */
    async update(
      id: string,
      changes: UserChanges,
      expectedVersion: number | undefined,
      sql: Queryable = db,
    ): Promise<UserRecord | undefined> {
      const set: Record<string, unknown> = {}
      for (const [field, value] of Object.entries(changes)) {
        if (value !== undefined) set[userColumns[field as UserField]] = value
      }
      // a new address is unproved until a link mailed to it is used (the same address keeps its state)
      const verified =
        changes.email === undefined
          ? sql``
          : sql`, email_verified = email_verified and email = ${changes.email}`
      const [row] = await sql<UserRecord[]>`
        update users set ${sql(set)}${verified}, version = version + 1, updated_at = now()
        where id = ${id} ${expectedVersion === undefined ? sql`` : sql`and version = ${expectedVersion}`}
        returning ${sql(publicColumns)}`
      return row
    },

    /**
     * Whether the user has a password (an invited user has none), locking the row until the transaction ends;
     * undefined when no user has the id.
     */
    async hasPassword(id: string, sql: Queryable = db): Promise<boolean | undefined> {
      const [row] = await sql<{ hasPassword: boolean }[]>`
        select password_hash is not null as has_password from users where id = ${id} for update`
      return row?.hasPassword
    },

    /** Makes an invited user active (once they have a password); undefined when the user is not invited. */
    async activateInvited(id: string, sql: Queryable = db): Promise<UserRecord | undefined> {
      const [row] = await sql<UserRecord[]>`
        update users set status = 'active', version = version + 1, updated_at = now()
        where id = ${id} and status = 'invited'
        returning ${sql(publicColumns)}`
      return row
    },

    async delete(id: string, sql: Queryable = db): Promise<boolean> {
      const result = await sql`delete from users where id = ${id}`
      return result.count > 0
    },
  }
}

export type UsersRepository = ReturnType<typeof createUsersRepository>
