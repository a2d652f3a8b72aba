// User use cases: what creating, reading, listing, changing and removing a user means, whoever calls it.
import {
  AppError,
  type CreateUserBody,
  type UpdateUserBody,
  type User,
  type UserListQuery,
  type UserStatus,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Queryable, type Sql, transaction } from '@meridian/db'
import { type AuditSource, appendAudit } from '@meridian/service-kit'
import { userList } from '../data/user-columns.ts'
import type { UserChanges, UserRecord, UsersRepository } from '../data/users-repository.ts'
import type { CredentialRevoker } from './credential-revocation.ts'
import { hashPassword } from './passwords.ts'
import { recordProfileChange, recordRegistration, recordRemoval } from './user-events.ts'
import { assertIfMatch, userETag } from './user-version.ts'

/**
 * What a user looks like to clients: no hash, no internal version, ISO timestamps. A list row holds only the
 * columns its sparse fieldset selected, and only those fields appear. (Field by field rather than a generic
 * pick: this runs for every item of every page.)
 */
export function presentUser(record: Partial<UserRecord>): Partial<User> {
  const user: Partial<User> = {}
  if (record.id !== undefined) user.id = record.id
  if (record.name !== undefined) user.name = record.name
  if (record.email !== undefined) user.email = record.email
  if (record.emailVerified !== undefined) user.emailVerified = record.emailVerified
  if (record.role !== undefined) user.role = record.role
  if (record.status !== undefined) user.status = record.status
  if (record.age !== undefined) user.age = record.age
  if (record.createdAt !== undefined) user.createdAt = record.createdAt.toISOString()
  if (record.updatedAt !== undefined) user.updatedAt = record.updatedAt.toISOString()
  return user
}

/** Emails are compared case-insensitively: stored trimmed and lower-cased. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase()

/**
 * Whether a change takes rights away, so that the user's current credentials must stop working: a role set (a
 * token or session carries the role it was issued with) or a status other than active. Decided from the request,
 * not from the stored user: a change repeated revokes again.
 */
export const revokesCredentials = (changes: UserChanges): boolean =>
  changes.role !== undefined || (changes.status !== undefined && changes.status !== 'active')

export function createUserUseCases(
  users: UsersRepository,
  sql: Sql,
  revoker: Pick<CredentialRevoker, 'revokeWithin' | 'deliver'>,
  /**
   * registration mails a link to prove the address (email-verification.ts; none for the create-admin command),
   * written in the registration's transaction
   */
  verification?: {
    issueWithin(tx: Queryable, user: { id: string; email: string }): Promise<void>
    /** after the commit of a new address (unproved): the user's live sessions say so */
    followVerification(user: Pick<UserRecord, 'id' | 'emailVerified'>): Promise<void>
  },
) {
  async function getUser(id: string): Promise<{ user: UserRecord; etag: string }> {
    const user = await users.findById(id)
    if (!user) throw AppError.notFound(`User ${id} not found`)
    return { user, etag: userETag(user.id, user.version) }
  }

  /**
   * An invited user has no password, so only setting one (PUT /users/{id}/password) takes them out of `invited`.
   * Locks the row: a password set meanwhile waits for this change.
   */
  async function assertMayTakeStatus(id: string, status: UserStatus | undefined, tx: Queryable) {
    if (status === undefined || status === 'invited') return
    if ((await users.hasPassword(id, tx)) === false) {
      throw AppError.conflict(
        'An invited user has no password: an admin setting one (PUT /users/{id}/password) makes them active',
      )
    }
  }

  return {
    getUser,

    /**
     * Creates the user and, in the same transaction, its user.registered event (never with the password) and the mail
     * of a link that proves its address. Without a
     * password (which the route allows only admins) the user is invited, whatever status was asked for: no sign-in
     * until an admin sets a password.
     */
    async registerUser(
      input: CreateUserBody,
      source?: AuditSource,
    ): Promise<{ user: UserRecord; etag: string }> {
      const passwordHash = input.password === undefined ? null : await hashPassword(input.password)
      const user = await transaction(sql, async (tx) => {
        const created = await users.insert(
          {
            name: input.name.trim(),
            email: normaliseEmail(input.email),
            passwordHash,
            role: input.role ?? 'user',
            status: passwordHash === null ? 'invited' : (input.status ?? 'active'),
            age: input.age ?? null,
          },
          tx,
        )
        await recordRegistration(tx, created)
        await verification?.issueWithin(tx, created)
        if (source) {
          await appendAudit(tx, source, {
            action: 'user.created',
            target: `user:${created.id}`,
            detail: { role: created.role, status: created.status },
          })
        }
        return created
      })
      return { user, etag: userETag(user.id, user.version) }
    },

    /**
     * A page of users as the list envelope; sort and fields outside the allow-lists are a 422, never SQL. `path` is
     * the one the client used, which the links keep with every other query parameter.
     */
    async listUsers(query: UserListQuery, path: string): Promise<ListEnvelope<Partial<User>>> {
      const request = userList.parse(query)
      const { rows, total } = await users.list(request)
      return listEnvelope(path, query, request, rows.map(presentUser), total)
    },

    /**
     * Applies a partial change and, in the same transaction, its user.profile_changed event and, when it takes rights
     * away, the revocation of the user's credentials; with If-Match, only to the version the client read (else 412).
     */
    async changeUser(id: string, changes: UpdateUserBody, ifMatch: string | undefined, source?: AuditSource) {
      let expectedVersion: number | undefined
      if (ifMatch && ifMatch.trim() !== '*') {
        const { user, etag } = await getUser(id)
        assertIfMatch(ifMatch, etag)
        expectedVersion = user.version
      }
      const normalised = { ...changes, ...(changes.email ? { email: normaliseEmail(changes.email) } : {}) }
      const { updated, revocation } = await transaction(sql, async (tx) => {
        await assertMayTakeStatus(id, normalised.status, tx)
        const changed = await users.update(id, normalised, expectedVersion, tx)
        if (!changed) return {}
        await recordProfileChange(tx, changed)
        if (source) {
          // what was asked, by field name; a role or status change names its new value (never a password or email)
          const { role, status } = normalised
          await appendAudit(tx, source, {
            action:
              role !== undefined
                ? 'user.role_changed'
                : status !== undefined
                  ? 'user.status_changed'
                  : 'user.changed',
            target: `user:${changed.id}`,
            detail: {
              fields: Object.keys(changes).sort(),
              ...(role === undefined ? {} : { role }),
              ...(status === undefined ? {} : { status }),
            },
          })
        }
        // with the change or not at all: a crash after the commit cannot leave the old rights valid
        return {
          updated: changed,
          revocation: revokesCredentials(normalised) ? await revoker.revokeWithin(tx, changed.id) : undefined,
        }
      })
      if (updated) {
        if (revocation) await revoker.deliver(revocation)
        // a new address is unproved: the user's sessions say so (the same address keeps its state)
        if (normalised.email !== undefined) await verification?.followVerification(updated)
        return { user: updated, etag: userETag(updated.id, updated.version) }
      }
      // nothing matched: the user is gone (404), or another write got in between the check and the update (412)
      await getUser(id)
      throw AppError.preconditionFailed('The user was changed since you read it')
    },

    /**
     * Removes the user (their refresh tokens and API keys go with the row) with its user.removed event, and voids
     * what they still hold (the revocation in the same transaction).
     */
    async removeUser(id: string, source?: AuditSource): Promise<void> {
      const revocation = await transaction(sql, async (tx) => {
        if (!(await users.delete(id, tx))) return undefined
        await recordRemoval(tx, id)
        if (source) await appendAudit(tx, source, { action: 'user.removed', target: `user:${id}` })
        return revoker.revokeWithin(tx, id)
      })
      if (!revocation) throw AppError.notFound(`User ${id} not found`)
      await revoker.deliver(revocation)
    },
  }
}

export type UserUseCases = ReturnType<typeof createUserUseCases>
