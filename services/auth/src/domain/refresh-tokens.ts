// Refresh tokens: opaque, stored hashed, rotated on every use within a family; a reused token revokes its family.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { AppError } from '@meridian/contracts'
import { type Queryable, type Sql, transaction } from '@meridian/db'
import type { RefreshTokensRepository } from '../data/refresh-tokens-repository.ts'

export const invalidRefreshTokenMessage = 'Invalid or expired refresh token'

const hashToken = (token: string): string => createHash('sha256').update(token).digest('base64url')

export interface RefreshTokenLogger {
  warn(details: object, message: string): void
}

export interface RefreshTokenOptions {
  repository: RefreshTokensRepository
  sql: Sql
  ttlSeconds: number
  clock?: () => number
  logger?: RefreshTokenLogger
}

export function createRefreshTokens(options: RefreshTokenOptions) {
  const { repository, sql, ttlSeconds } = options
  const clock = options.clock ?? Date.now

  async function store(userId: string, familyId: string, db: Queryable) {
    const token = randomBytes(32).toString('base64url')
    const now = clock()
    await repository.insert(
      {
        familyId,
        userId,
        tokenHash: hashToken(token),
        createdAt: new Date(now),
        expiresAt: new Date(now + ttlSeconds * 1000),
      },
      db,
    )
    return token
  }

  return {
    ttlSeconds,

    /** The first token of a new family (a login). */
    issue(userId: string): Promise<string> {
      return store(userId, randomUUID(), sql)
    },

    /**
     * Exchanges a live token for the next one of its family. A token presented a second time (replayed, stolen, or
     * the loser of two concurrent refreshes) revokes the whole family, so whoever holds its newest token is logged
     * out too. Anything else that is not a live token is the same 401.
     */
    async rotate(token: string): Promise<{ userId: string; familyId: string; refreshToken: string }> {
      const tokenHash = hashToken(token)
      const rotated = await transaction(sql, async (tx) => {
        const consumed = await repository.consume(tokenHash, new Date(clock()), tx)
        if (!consumed) return undefined
        const next = await store(consumed.userId, consumed.familyId, tx)
        return { userId: consumed.userId, familyId: consumed.familyId, refreshToken: next }
      })
      if (rotated) return rotated
      const known = await repository.findByHash(tokenHash)
      if (known?.usedAt) {
        const revoked = await repository.revokeFamily(known.familyId, new Date(clock()))
        if (revoked > 0) {
          options.logger?.warn(
            { familyId: known.familyId, userId: known.userId, revoked },
            'refresh token reused: its family is revoked',
          )
        }
      }
      throw AppError.unauthorized(invalidRefreshTokenMessage)
    },

    /**
     * Ends the family of a token, whichever member it is (the newest, a spent one, even a revoked or expired one): a
     * client signing out with the token it holds ends every token minted from the same login. An unknown token
     * changes nothing; the caller answers the same either way.
     */
    async revokeFamilyOf(token: string): Promise<void> {
      const known = await repository.findByHash(hashToken(token))
      if (known) await repository.revokeFamily(known.familyId, new Date(clock()))
    },

    /** Ends a family, e.g. when its user may no longer sign in. */
    async revokeFamily(familyId: string): Promise<void> {
      await repository.revokeFamily(familyId, new Date(clock()))
    },
  }
}

export type RefreshTokens = ReturnType<typeof createRefreshTokens>
