// Signing in and staying signed in: password login (throttled), token pairs, refresh, cookie sessions, logout.
import { randomBytes } from 'node:crypto'
import { AppError, type LoginBody, type SessionRecord } from '@meridian/contracts'
import type { SessionStore } from '../data/session-store.ts'
import type { UserCredentials, UsersRepository } from '../data/users-repository.ts'
import type { AccessTokenIssuer, TokenSubject } from './access-tokens.ts'
import type { CredentialRevoker } from './credential-revocation.ts'
import type { LoginThrottle } from './login-throttle.ts'
import { hashPassword, verifyPassword } from './passwords.ts'
import { invalidRefreshTokenMessage, type RefreshTokens } from './refresh-tokens.ts'
import { normaliseEmail } from './users.ts'

/** The one answer to every failed login: unknown email, wrong password, or an account that may not sign in. */
export const invalidCredentialsMessage = 'Invalid email or password'

export interface SignInOptions {
  users: UsersRepository
  accessTokens: AccessTokenIssuer
  refreshTokens: RefreshTokens
  sessions: SessionStore
  throttle: LoginThrottle
  sessionTtlSeconds: number
  /** a token issued right after a revocation must not fall in the revoked second */
  revoker: Pick<CredentialRevoker, 'awaitIssuable'>
  clock?: () => number
}

export function createSignIn(options: SignInOptions) {
  const { users, accessTokens, refreshTokens, sessions, throttle, sessionTtlSeconds, revoker } = options
  const clock = options.clock ?? Date.now
  // An unknown email, or an invited user (no password yet), is checked against this hash, so it costs the same
  // argon2 time as a wrong password: the answer's timing reveals neither.
  const dummyHash = hashPassword(randomBytes(24).toString('base64url'))

  async function passwordMatches(user: UserCredentials | undefined, password: string): Promise<boolean> {
    if (!user?.passwordHash) {
      await verifyPassword(await dummyHash, password)
      return false
    }
    return verifyPassword(user.passwordHash, password)
  }

  const subjectOf = (user: TokenSubject): TokenSubject => ({
    id: user.id,
    name: user.name,
    email: user.email,
    role: user.role,
    ...(user.emailVerified === undefined ? {} : { emailVerified: user.emailVerified }),
  })

  return {
    /**
     * Who the credentials belong to. Every failure is the same 401, an inactive, suspended or invited account
     * included (a different answer would confirm the password to whoever guessed it), and counts towards the
     * throttle.
     */
    async authenticate(credentials: LoginBody, clientAddress: string): Promise<TokenSubject> {
      const email = normaliseEmail(credentials.email)
      await throttle.assertMayAttempt(clientAddress, email)
      const user = await users.findCredentialsByEmail(email)
      const matches = await passwordMatches(user, credentials.password)
      if (!user || !matches || user.status !== 'active') {
        await throttle.recordFailure(clientAddress, email)
        throw AppError.unauthorized(invalidCredentialsMessage)
      }
      await throttle.recordSuccess(email)
      return subjectOf(user)
    },

    /** A new access token and the first refresh token of a new family. */
    async issueTokenPair(subject: TokenSubject) {
      await revoker.awaitIssuable(subject.id)
      const { accessToken, expiresIn } = accessTokens.issue(subject)
      const refreshToken = await refreshTokens.issue(subject.id)
      return { accessToken, refreshToken, tokenType: 'Bearer' as const, expiresIn }
    },

    /** Rotates the refresh token and issues an access token with the user's current name, email and role. */
    async refresh(refreshToken: string) {
      const rotated = await refreshTokens.rotate(refreshToken)
      const user = await users.findById(rotated.userId)
      if (user?.status !== 'active') {
        await refreshTokens.revokeFamily(rotated.familyId)
        throw AppError.unauthorized(invalidRefreshTokenMessage)
      }
      await revoker.awaitIssuable(user.id)
      const { accessToken, expiresIn } = accessTokens.issue(subjectOf(user))
      return { accessToken, refreshToken: rotated.refreshToken, tokenType: 'Bearer' as const, expiresIn }
    },

    /**
     * A server-side session for the cookie-session mode; returns its id (the cookie value). Its record says whether the
     * address is verified, as the subject was read; read again once stored, so that a change committed in between
     * (whose rewrite of the user's sessions came before this one was indexed) is not missed.
     */
    async openSession(subject: TokenSubject): Promise<{ sessionId: string; ttlSeconds: number }> {
      const record: SessionRecord = {
        userId: subject.id,
        role: subject.role,
        createdAt: new Date(clock()).toISOString(),
        ...(subject.emailVerified === undefined ? {} : { emailVerified: subject.emailVerified }),
      }
      const sessionId = await sessions.create(record, sessionTtlSeconds)
      const now = await users.findById(subject.id)
      if (now && now.emailVerified !== record.emailVerified) {
        await sessions.setEmailVerified(subject.id, now.emailVerified)
      }
      return { sessionId, ttlSeconds: sessionTtlSeconds }
    },

    /**
     * Signing out: ends the cookie session and revokes the refresh token's whole family, whichever is given. Neither
     * needs to be live: the outcome (nothing left of them) is the same, and nothing is revealed about them. The
     * session's connections elsewhere are told, by the session store's announcement.
     */
    async signOut({ sessionId, refreshToken }: { sessionId?: string; refreshToken?: string }): Promise<void> {
      if (sessionId) await sessions.end(sessionId)
      if (refreshToken) await refreshTokens.revokeFamilyOf(refreshToken)
    },
  }
}

export type SignIn = ReturnType<typeof createSignIn>
