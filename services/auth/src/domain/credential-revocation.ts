// Taking a user's credentials away at once: when the user is suspended, deactivated, given a role or deleted, every
// access token, cookie session and remembered API-key answer issued before that moment stops working in every
// service, and the user's refresh tokens are revoked.
import { AppError, type CredentialRevocation } from '@meridian/contracts'
import type { CredentialRevocations } from '@meridian/service-kit'
import type { CredentialRevocationsStore } from '../data/credential-revocations-store.ts'

export interface CredentialRevokerOptions {
  store: CredentialRevocationsStore
  /**
   * this instance's view of the revocations (the auth plugin's), updated at once rather than by pub/sub; none for a
   * process that serves no requests (the create-admin command)
   */
  local?: CredentialRevocations
  refreshTokens: { revokeAllOfUser(userId: string, now: Date): Promise<number> }
  /**
   * how long a revocation is kept, ms: the longest lifetime of what it voids (access tokens, sessions), plus the
   * verifiers' clock tolerance
   */
  keepForMs: number
  clock?: () => number
  sleep?: (ms: number) => Promise<void>
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export function createCredentialRevoker(options: CredentialRevokerOptions) {
  const { store, local, refreshTokens, keepForMs } = options
  const clock = options.clock ?? Date.now
  const sleep = options.sleep ?? wait

  return {
    /**
     * Revokes everything the user holds now. Called after the change is committed; when Redis cannot take the
     * revocation the caller gets 503 and may repeat the request (revoking again is harmless).
     */
    async revokeCredentialsOf(userId: string): Promise<void> {
      const now = clock()
      const revocation: CredentialRevocation = { userId, revokedBefore: now, until: now + keepForMs }
      await refreshTokens.revokeAllOfUser(userId, new Date(now))
      local?.apply(revocation)
      try {
        await store.publish(revocation)
      } catch (error) {
        throw new AppError(503, 'SERVICE_UNAVAILABLE', {
          message: 'The change is saved, but signing the user out everywhere failed; repeat the request',
          retryAfter: 1,
          cause: error,
        })
      }
    },

    /**
     * Waits, when needed, until a new access token for the user can carry an `iat` (whole seconds) that is not before
     * the user's latest revocation: a token of the revocation's own second counts as revoked. At most a second, and
     * only right after a revocation.
     */
    async awaitIssuable(userId: string): Promise<void> {
      const revokedBefore = local?.revokedBefore(userId) ?? 0
      // Checked again after each wait: a Node timer may fire up to a millisecond before Date.now() reaches the
      // next second (timers run on the monotonic clock, truncated to ms), which left a token in the revoked second.
      for (let now = clock(); revokedBefore > Math.floor(now / 1000) * 1000; now = clock()) {
        await sleep(1000 - (now % 1000))
      }
    },
  }
}

export type CredentialRevoker = ReturnType<typeof createCredentialRevoker>
