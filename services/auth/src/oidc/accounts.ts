// Users as OpenID Connect accounts: claims for ID tokens and /userinfo, and the password check of the login form.
import { randomBytes } from 'node:crypto'
import type { Sql } from '@meridian/db'
import type { Account, AccountClaims } from 'oidc-provider'
import { createUsersRepository, type UserRecord } from '../data/users-repository.ts'
import type { LoginThrottle } from '../domain/login-throttle.ts'
import { hashPassword, verifyPassword } from '../domain/passwords.ts'
import { normaliseEmail } from '../domain/users.ts'

/**
 * Which claims each scope releases (OIDC Core 5.4). Users have no address or phone fields, so those scopes are
 * accepted but release nothing until the directory holds such data.
 */
export const claimsOfScopes = {
  openid: ['sub'],
  profile: ['name', 'preferred_username', 'updated_at'],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified'],
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The OpenID Connect standard claims of a user (all of them; the scopes of a token choose which are released). */
export function claimsOf(user: UserRecord): AccountClaims {
  return {
    sub: user.id,
    name: user.name,
    // the email is what a Meridian user signs in with
    preferred_username: user.email,
    updated_at: Math.floor(user.updatedAt.getTime() / 1000),
    email: user.email,
    // true once a link mailed to the address was used (a changed address is unproved until then)
    email_verified: user.emailVerified,
  }
}

/** The claims /userinfo answers for a Meridian access token: the standard ones and Meridian's role claims. */
export type MeridianUserClaims = AccountClaims & { role: string; roles: string[] }

export interface Accounts {
  /** oidc-provider's findAccount: only active users hold sessions and tokens (a suspended user's refresh fails) */
  findAccount(sub: string): Promise<Account | undefined>
  /**
   * Every standard claim of an active user, with Meridian's `role` and `roles` (as in its access tokens, read now:
   * a role changed since the token was issued shows the new one); undefined when the user is gone or not active.
   */
  meridianClaims(sub: string): Promise<MeridianUserClaims | undefined>
  /**
   * The user's id when the email and password match an active user. Throttled like POST /login, on the same
   * counters (one budget of failures per address and per account, whichever form is used): throws the throttle's
   * 429 AppError when used up.
   */
  authenticate(email: string, password: string, clientAddress: string): Promise<string | undefined>
}

export function createAccounts(sql: Sql, throttle: LoginThrottle): Accounts {
  const users = createUsersRepository(sql)
  // verified against when the email is unknown or the user invited, so that the answer takes as long as for a
  // wrong password
  let decoyHash: Promise<string> | undefined
  const decoy = () => {
    decoyHash ??= hashPassword(randomBytes(16).toString('hex'))
    return decoyHash
  }

  async function activeUser(sub: string): Promise<UserRecord | undefined> {
    if (!uuidPattern.test(sub)) return undefined
    const user = await users.findById(sub)
    return user?.status === 'active' ? user : undefined
  }

  return {
    async findAccount(sub) {
      const user = await activeUser(sub)
      return user && { accountId: user.id, claims: () => claimsOf(user) }
    },

    async meridianClaims(sub) {
      const user = await activeUser(sub)
      // a user holds exactly one role; `roles` lists it, as the access tokens do
      return user && { ...claimsOf(user), role: user.role, roles: [user.role] }
    },

    async authenticate(email, password, clientAddress) {
      const normalised = normaliseEmail(email)
      await throttle.assertMayAttempt(clientAddress, normalised)
      const credentials = await users.findCredentialsByEmail(normalised)
      // an invited user has no hash yet: checked against the decoy too, failing like a wrong password
      const matches = await verifyPassword(credentials?.passwordHash ?? (await decoy()), password)
      if (!credentials || !matches || credentials.status !== 'active') {
        await throttle.recordFailure(clientAddress, normalised)
        return undefined
      }
      await throttle.recordSuccess(normalised)
      return credentials.id
    },
  }
}
