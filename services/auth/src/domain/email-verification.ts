// Address verification and change (issue 44, point 5). Registration mails a link to the new user's address; using it
// (POST /email-verifications/{token}) marks the address verified, which users show as `emailVerified` and ID tokens
// as `email_verified`. A signed-in user whose address is not verified yet asks for a new link (POST
// /email-verifications): it supersedes the older one, as a link that expired unused would otherwise leave no way. Your own address is changed with your password: a link goes to the new address (using it sets
// the address, verified) and the current one is told a change was asked for. Links are single use, end after
// EMAIL_VERIFICATION_TTL_MS, and a newer one of the same purpose supersedes the older; every link that cannot be
// used is refused with one and the same error. Once a change of the address's state commits (a link used, an admin's
// new address), the user's live cookie sessions are rewritten to say it, so that their next request does.
import { AppError, type EmailChangeBody } from '@meridian/contracts'
import { type Queryable, type Sql, transaction } from '@meridian/db'
import type { Principal } from '@meridian/service-kit'
import type {
  EmailVerificationsRepository,
  VerificationPurpose,
} from '../data/email-verifications-repository.ts'
import type { SecurityMailsRepository } from '../data/security-mails-repository.ts'
import type { SessionStore } from '../data/session-store.ts'
import type { UserRecord, UsersRepository } from '../data/users-repository.ts'
import type { AddressThrottle } from './address-throttle.ts'
import { isLinkToken, linkTo, linkTokenHash, newLinkToken } from './link-tokens.ts'
import type { SecurityMailSealing } from './security-mails.ts'
import type { SignIn } from './sign-in.ts'
import { recordProfileChange } from './user-events.ts'
import { normaliseEmail } from './users.ts'

/** The one answer to a link that cannot be used, whatever the reason. */
export const invalidVerificationLinkMessage = 'This address verification link is invalid, used or expired'

/** The answer to a new link asked for by a user whose address is proved already. */
export const alreadyVerifiedMessage = 'The address of the account is verified already'

export interface EmailVerificationDependencies {
  sql: Sql
  users: Pick<UsersRepository, 'findById'>
  verifications: EmailVerificationsRepository
  mails: Pick<SecurityMailsRepository, 'enqueueFor' | 'enqueueTo'>
  sealing: Pick<SecurityMailSealing, 'prepare'>
  signIn: Pick<SignIn, 'authenticate'>
  /** new links asked for, per address (the account's, normalised) */
  throttle: AddressThrottle
  /** the user's live cookie sessions, rewritten to say whether the address is verified */
  sessions: Pick<SessionStore, 'setEmailVerified'>
  logger: { warn(details: object, message: string): void }
  settings: {
    /** EMAIL_VERIFICATION_URL: the token is appended after a `/` */
    verifyUrl: string
    ttlMs: number
  }
  clock?: () => number
}

export function createEmailVerification(dependencies: EmailVerificationDependencies) {
  const { sql, users, verifications, mails, sealing, signIn, throttle, sessions, logger, settings } =
    dependencies
  const clock = dependencies.clock ?? Date.now
  const expiresInMinutes = Math.max(1, Math.floor(settings.ttlMs / 60_000))

  /** A link proving `email` for the user, mailed to that address, in the transaction `tx`. */
  async function issue(tx: Queryable, userId: string, email: string, purpose: VerificationPurpose) {
    const token = newLinkToken()
    await verifications.issue(
      { userId, email, purpose, tokenHash: linkTokenHash(token), ttlMs: settings.ttlMs },
      tx,
    )
    const verifyUrl = linkTo(settings.verifyUrl, token)
    const mail = sealing.prepare('verify_address', { verifyUrl, expiresInMinutes }, ['verifyUrl'])
    await mails.enqueueTo(userId, email, mail, tx)
  }

  /** What using a link changes, in its transaction: the user as changed, or undefined when it cannot be used. */
  async function apply(tx: Queryable, token: string): Promise<UserRecord | undefined> {
    const used = await verifications.use(linkTokenHash(token), tx)
    if (!used?.live) return undefined
    const changed =
      used.purpose === 'verify'
        ? await verifications.markVerified(used.userId, used.email, tx)
        : await verifications.changeAddress(used.userId, used.email, tx)
    if (changed) await recordProfileChange(tx, changed)
    return changed
  }

  /**
   * After the commit of a change of the address's state: the user's live sessions say it. A Redis failure leaves them
   * saying the former state (logged; the change stands, and a new sign-in says it).
   */
  async function followVerification(user: Pick<UserRecord, 'id' | 'emailVerified'>): Promise<void> {
    try {
      await sessions.setEmailVerified(user.id, user.emailVerified)
    } catch (error) {
      logger.warn(
        { err: error, userId: user.id },
        "the user's sessions could not be told whether the address is verified",
      )
    }
  }

  return {
    followVerification,

    /** In the registration's transaction: a link to prove the new user's address. */
    async issueWithin(tx: Queryable, user: { id: string; email: string }): Promise<void> {
      await issue(tx, user.id, user.email, 'verify')
    },

    /**
     * A new link to the signed-in user's own address while it is not verified (it supersedes the older link); 409 once
     * it is. A client's credential (client_credentials) has no address: 403.
     */
    async requestLink(principal: Principal): Promise<void> {
      if (principal.kind !== 'user') throw AppError.forbidden('Only a user has an address to verify')
      const user = await users.findById(principal.subject)
      if (!user) throw AppError.notFound(`User ${principal.subject} not found`)
      if (user.emailVerified) throw AppError.conflict(alreadyVerifiedMessage)
      // per address, whichever client asks (the route limits each client)
      await throttle.take(normaliseEmail(user.email))
      await transaction(sql, (tx) => issue(tx, user.id, user.email, 'verify'))
    },

    /** Uses a mailed link: the address proved (and, for a change, set). 400 for any link that cannot be used. */
    async confirm(token: string): Promise<void> {
      if (!isLinkToken(token)) throw AppError.badRequest(invalidVerificationLinkMessage)
      const changed = await transaction(sql, (tx) => apply(tx, token))
      if (!changed) throw AppError.badRequest(invalidVerificationLinkMessage)
      await followVerification(changed)
    },

    /**
     * Your own address, with your password (checked and throttled as a login): a link to the new address, and a
     * notice to the current one. Nothing changes until the link is used.
     */
    async requestChange(
      principal: Principal,
      userId: string,
      body: EmailChangeBody,
      clientAddress: string,
    ): Promise<void> {
      if (principal.kind !== 'user' || principal.subject !== userId || principal.method === 'api-key') {
        throw AppError.forbidden('Only the user may change their own address (an admin sets it with PATCH)')
      }
      const user = await users.findById(userId)
      if (!user) throw AppError.notFound(`User ${userId} not found`)
      await assertPassword(signIn, user.email, body.password, clientAddress)
      const email = normaliseEmail(body.email)
      if (email === user.email) {
        throw AppError.validation([{ field: 'email', message: 'is already the address of the account' }])
      }
      const requestedAt = new Date(clock()).toISOString()
      await transaction(sql, async (tx) => {
        await issue(tx, userId, email, 'change')
        await mails.enqueueFor(userId, sealing.prepare('address_change_requested', { requestedAt }), tx)
      })
    },
  }
}

/** The login's check and throttle on the password; a wrong one is 403 (the caller is signed in already). */
async function assertPassword(
  signIn: Pick<SignIn, 'authenticate'>,
  email: string,
  password: string,
  clientAddress: string,
): Promise<void> {
  try {
    await signIn.authenticate({ email, password }, clientAddress)
  } catch (error) {
    if (error instanceof AppError && error.statusCode === 401) {
      throw AppError.forbidden('The current password is incorrect')
    }
    throw error
  }
}

export type EmailVerification = ReturnType<typeof createEmailVerification>
