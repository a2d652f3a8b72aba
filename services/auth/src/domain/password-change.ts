// Changing a password: your own with the current one (throttled like a login), anyone's as an admin; either way
// every credential the user held before stops working, and any password reset link of the user with it (the
// repository's statement). An invited user's first password makes them active. Your own change is told to your
// address ("your password was changed"), by a security mail written in the change's transaction.
import { AppError, type ChangePasswordBody } from '@meridian/contracts'
import { type Sql, transaction } from '@meridian/db'
import { actorOf, appendAudit, type Principal } from '@meridian/service-kit'
import type { UserPasswordsRepository } from '../data/user-passwords-repository.ts'
import type { UsersRepository } from '../data/users-repository.ts'
import type { CredentialRevoker } from './credential-revocation.ts'
import { hashPassword } from './passwords.ts'
import type { SecurityMailQueue } from './security-mails.ts'
import type { SignIn } from './sign-in.ts'
import { recordProfileChange } from './user-events.ts'

export interface PasswordChangeDependencies {
  sql: Sql
  users: UsersRepository
  passwords: UserPasswordsRepository
  signIn: Pick<SignIn, 'authenticate'>
  revoker: Pick<CredentialRevoker, 'revokeWithin' | 'deliver'>
  /** the "your password was changed" mail */
  notices: Pick<SecurityMailQueue, 'passwordChanged'>
}

export function createPasswordChange({
  sql,
  users,
  passwords,
  signIn,
  revoker,
  notices,
}: PasswordChangeDependencies) {
  /** Your own password: only with the current one, and never with an API key (a leaked key must not take the account). */
  async function assertKnowsCurrentPassword(
    principal: Principal,
    email: string,
    body: ChangePasswordBody,
    clientAddress: string,
  ): Promise<void> {
    if (principal.method === 'api-key') throw AppError.forbidden('API keys cannot change passwords')
    if (body.currentPassword === undefined) {
      throw AppError.validation([
        { field: 'currentPassword', message: 'is required to change your own password' },
      ])
    }
    try {
      // the login's check and throttle: this route is no way around either
      await signIn.authenticate({ email, password: body.currentPassword }, clientAddress)
    } catch (error) {
      if (error instanceof AppError && error.statusCode === 401) {
        throw AppError.forbidden('The current password is incorrect')
      }
      throw error
    }
  }

  return {
    /**
     * The caller is the user or an admin (the route's guard). Signs the user out everywhere, this client too (the
     * revocation is written with the new password: OpenID provider sessions and tokens included). An
     * invited user (who cannot sign in, so this is an admin) becomes active with the new password, in its
     * transaction, with a user.profile_changed event.
     */
    async changePassword(
      principal: Principal,
      userId: string,
      body: ChangePasswordBody,
      clientAddress: string,
      requestId?: string,
    ): Promise<void> {
      const user = await users.findById(userId)
      if (!user) throw AppError.notFound(`User ${userId} not found`)
      const ownPassword = principal.kind === 'user' && principal.subject === userId
      if (ownPassword) await assertKnowsCurrentPassword(principal, user.email, body, clientAddress)
      const passwordHash = await hashPassword(body.newPassword)
      const revocation = await transaction(sql, async (tx) => {
        if (!(await passwords.setPasswordHash(userId, passwordHash, tx))) return undefined
        const activated = await users.activateInvited(userId, tx)
        if (activated) await recordProfileChange(tx, activated)
        if (ownPassword) await notices.passwordChanged(userId, tx)
        // another's password set (an admin's act): in the audit trail with the change; never the password
        if (!ownPassword) {
          await appendAudit(
            tx,
            { actor: actorOf(principal), address: clientAddress, ...(requestId ? { requestId } : {}) },
            {
              action: 'user.password_set',
              target: `user:${userId}`,
              detail: { activated: activated !== undefined },
            },
          )
        }
        return revoker.revokeWithin(tx, userId)
      })
      if (!revocation) throw AppError.notFound(`User ${userId} not found`)
      await revoker.deliver(revocation)
    },
  }
}

export type PasswordChange = ReturnType<typeof createPasswordChange>
