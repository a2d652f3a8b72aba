// Refresh tokens in PostgreSQL (their SHA-256 only): SQL only; the rotation rules live in domain/refresh-tokens.ts.
import type { Queryable } from '@meridian/db'

export interface RefreshTokenRecord {
  id: string
  familyId: string
  userId: string
  expiresAt: Date
  usedAt: Date | null
  revokedAt: Date | null
}

export interface NewRefreshToken {
  familyId: string
  userId: string
  tokenHash: string
  createdAt: Date
  expiresAt: Date
}

const columns = ['id', 'family_id', 'user_id', 'expires_at', 'used_at', 'revoked_at']

export function createRefreshTokensRepository(db: Queryable) {
  return {
    async insert(token: NewRefreshToken, sql: Queryable = db): Promise<void> {
      await sql`
        insert into refresh_tokens ${sql({
          family_id: token.familyId,
          user_id: token.userId,
          token_hash: token.tokenHash,
          created_at: token.createdAt,
          expires_at: token.expiresAt,
        })}`
    },

    /**
     * Marks a live token used and returns it; undefined when it is unknown, used, revoked or expired. Of two callers
     * racing with the same token, the second waits for the first's row lock, re-reads `used_at` and gets undefined.
     */
    async consume(
      tokenHash: string,
      now: Date,
      sql: Queryable = db,
    ): Promise<RefreshTokenRecord | undefined> {
      const [row] = await sql<RefreshTokenRecord[]>`
        update refresh_tokens set used_at = ${now}
        where token_hash = ${tokenHash} and used_at is null and revoked_at is null and expires_at > ${now}
        returning ${sql(columns)}`
      return row
    },

    async findByHash(tokenHash: string, sql: Queryable = db): Promise<RefreshTokenRecord | undefined> {
      const [row] = await sql<RefreshTokenRecord[]>`
        select ${sql(columns)} from refresh_tokens where token_hash = ${tokenHash}`
      return row
    },

    /** Revokes every live token of the user (every family); returns how many were still unrevoked. */
    async revokeAllOfUser(userId: string, now: Date, sql: Queryable = db): Promise<number> {
      const result = await sql`
        update refresh_tokens set revoked_at = ${now} where user_id = ${userId} and revoked_at is null`
      return result.count
    },

    /** Revokes every token of the family; returns how many were still unrevoked. */
    async revokeFamily(familyId: string, now: Date, sql: Queryable = db): Promise<number> {
      const result = await sql`
        update refresh_tokens set revoked_at = ${now} where family_id = ${familyId} and revoked_at is null`
      return result.count
    },
  }
}

export type RefreshTokensRepository = ReturnType<typeof createRefreshTokensRepository>
