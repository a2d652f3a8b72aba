// Taking a user's credentials away: when the user is suspended, deactivated, given a role, given a new password or
// deleted, every access token, cookie session and remembered API-key answer issued before that moment stops working
// in every service, and the user's refresh tokens and OpenID provider sessions and grants are ended.
//
// Durable: the revocation is written in the transaction of the change (with the refresh tokens' and the provider's
// rows), so it commits or rolls back with it, and is delivered to Redis (which every service follows) at least once —
// right after the commit, and by a round until delivered. A crash or a Redis outage in between only delays it.
import type { CredentialRevocation } from '@meridian/contracts'
import { type Queryable, type Sql, transaction } from '@meridian/db'
import { type CredentialRevocations, clockToleranceMs } from '@meridian/service-kit'
import type {
  CredentialRevocationsRepository,
  StoredRevocation,
} from '../data/credential-revocations-repository.ts'
import type { CredentialRevocationsStore } from '../data/credential-revocations-store.ts'

export type { StoredRevocation } from '../data/credential-revocations-repository.ts'

export interface RevocationLogger {
  warn(details: object, message: string): void
}

export interface CredentialRevokerOptions {
  sql: Sql
  revocations: CredentialRevocationsRepository
  /** Redis: where the services read revocations (key) and hear of them (pub/sub) */
  store: Pick<CredentialRevocationsStore, 'publish'>
  /**
   * this instance's view of the revocations (the auth plugin's), updated at once rather than by pub/sub; none for a
   * process that serves no requests (the create-admin command)
   */
  local?: CredentialRevocations
  refreshTokens: { revokeAllOfUser(userId: string, now: Date, tx: Queryable): Promise<number> }
  /** the OpenID provider's sessions, grants, codes and tokens of the user (oidc_payloads) */
  providerAccounts: { endAllOf(accountId: string, tx: Queryable): Promise<number> }
  /**
   * how long a revocation is kept, ms: the longest lifetime of what it voids (access tokens, sessions), plus the
   * verifiers' clock tolerance
   */
  keepForMs: number
  logger?: RevocationLogger
  clock?: () => number
  sleep?: (ms: number) => Promise<void>
}

/**
 * How long a revocation is kept (ms): the longest lifetime of what it voids (access tokens, the provider's included,
 * and cookie sessions), plus the verifiers' clock tolerance.
 */
export const revocationKeepForMs = (config: {
  ACCESS_TOKEN_TTL_SECONDS: number
  SESSION_TTL_SECONDS: number
}): number => Math.max(config.ACCESS_TOKEN_TTL_SECONDS, config.SESSION_TTL_SECONDS) * 1000 + clockToleranceMs

/** Undelivered revocations one round delivers at most (the next round takes the rest). */
const roundBatch = 200

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const recordOf = ({ userId, revokedBefore, until }: StoredRevocation): CredentialRevocation => ({
  userId,
  revokedBefore,
  until,
})

/**
 * Resolves once the clock's whole second is not before `revokedBefore` (ms), so that a token stamped now (`iat` in
 * seconds) is not taken for one of the revoked second. Checked again after each wait: a Node timer may fire up to a
 * millisecond before Date.now() reaches the next second (timers run on the monotonic clock, truncated to ms), which
 * left a token in the revoked second.
 */
export async function awaitSecondAfter(
  revokedBefore: number,
  clock: () => number,
  sleep: (ms: number) => Promise<void>,
): Promise<void> {
  for (let now = clock(); revokedBefore > Math.floor(now / 1000) * 1000; now = clock()) {
    await sleep(1000 - (now % 1000))
  }
}

export function createCredentialRevoker(options: CredentialRevokerOptions) {
  const { sql, revocations, store, local, refreshTokens, providerAccounts, keepForMs, logger } = options
  const clock = options.clock ?? Date.now
  const sleep = options.sleep ?? wait

  /** One round: up to a batch of undelivered revocations in force delivered, and the lapsed ones removed. */
  async function deliverPending(): Promise<{ delivered: number; lapsed: number }> {
    const now = new Date(clock())
    const delivered = await transaction(sql, async (tx) => {
      const pending = await revocations.lockUndelivered(roundBatch, now, tx)
      for (const revocation of pending) {
        local?.apply(recordOf(revocation))
        await store.publish(recordOf(revocation))
      }
      await revocations.markDelivered(
        pending.map((revocation) => revocation.id),
        new Date(clock()),
        tx,
      )
      return pending.length
    })
    const lapsed = await revocations.deleteLapsed(now)
    return { delivered, lapsed }
  }

  return {
    /**
     * Inside the transaction of the change: revokes the user's refresh tokens, ends their OpenID provider sessions
     * and grants, and writes the revocation for delivery. Hand the result to deliver() once committed.
     */
    async revokeWithin(tx: Queryable, userId: string): Promise<StoredRevocation> {
      const now = clock()
      await refreshTokens.revokeAllOfUser(userId, new Date(now), tx)
      await providerAccounts.endAllOf(userId, tx)
      return revocations.insert({ userId, revokedBefore: now, until: now + keepForMs }, tx)
    },

    /**
     * After the commit: applies the revocation in this instance at once and delivers it to Redis. A failed delivery
     * is logged and left to the round (deliverPending); the change itself stands. Resolves to whether it was
     * delivered.
     */
    async deliver(revocation: StoredRevocation): Promise<boolean> {
      local?.apply(recordOf(revocation))
      try {
        await store.publish(recordOf(revocation))
        await revocations.markDelivered([revocation.id], new Date(clock()))
        return true
      } catch (error) {
        logger?.warn(
          { err: error, userId: revocation.userId },
          'credential revocation not delivered yet; the next round delivers it',
        )
        return false
      }
    },

    /**
     * One round: delivers the revocations still undelivered (a failed delivery, a crash after the commit, another
     * process's write), oldest first, and removes those that void nothing any more. Rows are locked while
     * delivered, so instances share the work; if Redis fails midway nothing is marked and the next round repeats
     * (a repeated delivery is harmless).
     */
    deliverPending,

    /**
     * Delivers every revocation still in force again, at once. Redis may come back without some it had taken: a
     * replica the sentinels promoted before it had copied them (replication is asynchronous), or a restart without
     * persistence. Run on each connection of the Redis they are delivered to (authentication.ts), so a failover
     * forgets none for longer than it takes auth to reconnect; one delivered twice is harmless (the newest is kept).
     */
    async redeliverInForce(): Promise<{ marked: number; delivered: number; lapsed: number }> {
      const marked = await revocations.markInForceUndelivered(new Date(clock()))
      const total = { marked, delivered: 0, lapsed: 0 }
      for (;;) {
        const round = await deliverPending()
        total.delivered += round.delivered
        total.lapsed += round.lapsed
        if (round.delivered < roundBatch) return total
      }
    },

    /**
     * Waits, when needed, until a new access token for the user can carry an `iat` (whole seconds) that is not before
     * the user's latest revocation: a token of the revocation's own second counts as revoked. The latest is read from
     * the database as well as this instance's view, so a revocation written by another process (create-admin) that
     * pub/sub has not brought yet is heeded too. At most a second, and only right after a revocation.
     */
    async awaitIssuable(userId: string): Promise<void> {
      const revokedBefore = Math.max(
        local?.revokedBefore(userId) ?? 0,
        await revocations.latestRevokedBefore(userId, new Date(clock())),
      )
      await awaitSecondAfter(revokedBefore, clock, sleep)
    },
  }
}

export type CredentialRevoker = ReturnType<typeof createCredentialRevoker>
