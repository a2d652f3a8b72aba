// Making someone an administrator from the command line: an installation's first admin, or another one.
import { AppError, CreateUserBody, type ErrorDetail } from '@meridian/contracts'
import { type Sql, transaction } from '@meridian/db'
import { Compile } from 'typebox/compile'
import type { UserPasswordsRepository } from '../data/user-passwords-repository.ts'
import type { UserRecord, UsersRepository } from '../data/users-repository.ts'
import type { CredentialRevoker } from './credential-revocation.ts'
import { hashPassword } from './passwords.ts'
import { recordProfileChange } from './user-events.ts'
import { normaliseEmail, type UserUseCases } from './users.ts'

export interface AdminRequest {
  email: string
  /** the name of a new user; an existing user keeps theirs */
  name?: string | undefined
  /** gives an existing user a new password too (a new user always gets one, as does an invited user, who has none) */
  resetPassword?: boolean | undefined
}

/**
 * Called only when a password is needed (a new user, an invited user, or resetPassword), so a plain promotion asks
 * for none.
 */
export type PasswordSource = () => Promise<string>

export interface AdminOutcome {
  /** unchanged: the user already was an active admin */
  action: 'created' | 'promoted' | 'unchanged'
  /** the user was given a password: resetPassword, or an invited user's first one */
  passwordReset: boolean
  user: UserRecord
}

// registration's own rules (length, email format), so the command accepts exactly what POST /api/v1/users accepts
const registrationChecks = {
  name: Compile(CreateUserBody.properties.name),
  email: Compile(CreateUserBody.properties.email),
  password: Compile(CreateUserBody.properties.password),
}

/** The first problem of the field (an empty name also misses the visible-text pattern: one line says enough). */
function problemsOf(field: keyof typeof registrationChecks, value: string): ErrorDetail[] {
  const [first] = registrationChecks[field].Errors(value)
  // never `received`: one of these values is a password
  return first ? [{ field, message: first.message }] : []
}

function assertNoProblems(problems: ErrorDetail[]): void {
  if (problems.length > 0) throw AppError.validation(problems)
}

export function createAdminUseCases(deps: {
  sql: Sql
  users: UsersRepository
  passwords: UserPasswordsRepository
  /** registration itself: the user and its user.registered event in one transaction */
  registration: Pick<UserUseCases, 'registerUser'>
  /** a promotion or a new password signs the user out everywhere, as the same change through the API does */
  revoker: Pick<CredentialRevoker, 'revokeWithin' | 'deliver'>
}) {
  const { sql, users, passwords, registration, revoker } = deps

  async function acceptablePassword(readPassword: PasswordSource): Promise<string> {
    const password = await readPassword()
    assertNoProblems(problemsOf('password', password))
    return password
  }

  /**
   * Role, status (with their user.profile_changed event), when given the password, and the revocation of what the
   * user held, together or not at all.
   */
  function promote(id: string, needsPromotion: boolean, passwordHash: string | undefined) {
    return transaction(sql, async (tx) => {
      // the password first: an invited user may become active only with one
      if (passwordHash) await passwords.setPasswordHash(id, passwordHash, tx)
      if (needsPromotion) {
        const promoted = await users.update(id, { role: 'admin', status: 'active' }, undefined, tx)
        if (promoted) await recordProfileChange(tx, promoted)
      }
      const user = await users.findById(id, tx)
      // removed between the look-up and this transaction
      if (!user)
        throw AppError.notFound('The user was removed while being made an admin; run the command again')
      // what the user held was issued for the old role or password: void it with the change
      const revocation = needsPromotion || passwordHash ? await revoker.revokeWithin(tx, id) : undefined
      return { user, revocation }
    })
  }

  return {
    /**
     * Creates an active admin when no user has the email, else makes that user an active admin (password and
     * name unchanged unless resetPassword; an invited user, who has no password, is always given one). The
     * password is hashed before any transaction opens.
     */
    async makeAdmin(request: AdminRequest, readPassword: PasswordSource): Promise<AdminOutcome> {
      const email = normaliseEmail(request.email)
      const name = request.name?.trim()
      assertNoProblems([
        ...problemsOf('email', email),
        ...(name === undefined ? [] : problemsOf('name', name)),
      ])

      const existing = await users.findCredentialsByEmail(email)
      if (!existing) {
        if (name === undefined) {
          throw AppError.validation([
            { field: 'name', message: 'is required to create a user (none has this email)' },
          ])
        }
        const password = await acceptablePassword(readPassword)
        const { user } = await registration.registerUser({
          name,
          email,
          password,
          role: 'admin',
          status: 'active',
        })
        return { action: 'created', passwordReset: false, user }
      }

      const needsPromotion = existing.role !== 'admin' || existing.status !== 'active'
      const needsPassword = request.resetPassword === true || existing.passwordHash === null
      const passwordHash = needsPassword
        ? await hashPassword(await acceptablePassword(readPassword))
        : undefined
      const { user, revocation } = await promote(existing.id, needsPromotion, passwordHash)
      // a running auth's round delivers it should this process fail to
      if (revocation) await revoker.deliver(revocation)
      return {
        action: needsPromotion ? 'promoted' : 'unchanged',
        passwordReset: passwordHash !== undefined,
        user,
      }
    },
  }
}

export type AdminUseCases = ReturnType<typeof createAdminUseCases>
