// Password reset (issue 44, point 4). Asking for one does the same work and gets the same answer whether or not an
// account has the address: a token (32 random bytes, base64url) is made and its link encrypted every time, and one
// statement writes the reset (its SHA-256) and its mail only when an active user has the address. The link is
// PASSWORD_RESET_URL, `/` and the token (a page's fragment: no server receives it). Using the token sets the
// password and takes every credential of the user away (sessions, refresh tokens, OpenID grants: the revocation of a
// password change) and mails a "your password was changed" notice, in one transaction; a token that is unknown,
// expired, used, superseded or ended by a password change is refused with one and the same error.
import { AppError } from '@meridian/contracts'
import { type Sql, transaction } from '@meridian/db'
import type { PasswordResetsRepository } from '../data/password-resets-repository.ts'
import type { UserPasswordsRepository } from '../data/user-passwords-repository.ts'
import type { AddressThrottle } from './address-throttle.ts'
import type { CredentialRevoker } from './credential-revocation.ts'
import { isLinkToken, linkTo, linkTokenHash, newLinkToken } from './link-tokens.ts'
import { hashPassword } from './passwords.ts'
import type { SecurityMailQueue, SecurityMailSealing } from './security-mails.ts'
import { normaliseEmail } from './users.ts'

/** The one answer to a token that cannot be used, whatever the reason (nothing is told about the token). */
export const invalidResetLinkMessage = 'This password reset link is invalid, used or expired'

export interface PasswordResetDependencies {
  sql: Sql
  resets: PasswordResetsRepository
  passwords: Pick<UserPasswordsRepository, 'setPasswordHash'>
  sealing: Pick<SecurityMailSealing, 'prepare'>
  notices: Pick<SecurityMailQueue, 'passwordChanged'>
  revoker: Pick<CredentialRevoker, 'revokeWithin' | 'deliver'>
  throttle: AddressThrottle
  settings: {
    /** PASSWORD_RESET_URL: the token is appended after a `/` */
    resetUrl: string
    ttlMs: number
  }
}

export function createPasswordReset(dependencies: PasswordResetDependencies) {
  const { sql, resets, passwords, sealing, notices, revoker, throttle, settings } = dependencies
  const expiresInMinutes = Math.max(1, Math.floor(settings.ttlMs / 60_000))

  return {
    /**
     * Asks for a reset link to be mailed to the address. Resolves the same way whether or not an account has it;
     * 429 when the address asked too often (counted for every address, existing or not).
     */
    async request(email: string): Promise<void> {
      const normalised = normaliseEmail(email)
      await throttle.take(normalised)
      const token = newLinkToken()
      const resetUrl = linkTo(settings.resetUrl, token)
      const mail = sealing.prepare('password_reset', { resetUrl, expiresInMinutes }, ['resetUrl'])
      await resets.request({
        email: normalised,
        tokenHash: linkTokenHash(token),
        ttlMs: settings.ttlMs,
        mail,
      })
    },

    /**
     * Sets the password with the token of a reset link: single use (the reset is deleted as it is read), and only for
     * an account that may still sign in. Every credential the user held stops working; the notice is mailed.
     */
    async complete(token: string, password: string): Promise<void> {
      if (!isLinkToken(token)) throw AppError.badRequest(invalidResetLinkMessage)
      const revocation = await transaction(sql, async (tx) => {
        const used = await resets.use(linkTokenHash(token), tx)
        // an expired reset is deleted all the same (the transaction commits without a change of password)
        if (!used?.live || !used.active) return undefined
        await passwords.setPasswordHash(used.userId, await hashPassword(password), tx)
        await notices.passwordChanged(used.userId, tx)
        return revoker.revokeWithin(tx, used.userId)
      })
      if (!revocation) throw AppError.badRequest(invalidResetLinkMessage)
      await revoker.deliver(revocation)
    },
  }
}

export type PasswordReset = ReturnType<typeof createPasswordReset>
