// API keys in PostgreSQL: rows without the key itself (prefix + hash only); every function takes the pool or a tx.
import type { Queryable } from '@meridian/db'

export interface ApiKeyRecord {
  id: string
  userId: string
  name: string
  prefix: string
  scopes: string[]
  createdAt: Date
  expiresAt: Date | null
  lastUsedAt: Date | null
  revokedAt: Date | null
}

/**
 * A key found by its prefix, with what a verification needs: the hash and the owner's current role and status (and
 * whether their address is verified, which the key's principal says).
 */
export interface ApiKeyCredential extends ApiKeyRecord {
  keyHash: string
  ownerRole: string
  ownerStatus: string
  ownerName: string
  ownerEmail: string
  ownerEmailVerified: boolean
}

export interface NewApiKey {
  userId: string
  name: string
  prefix: string
  keyHash: string
  scopes: string[]
  expiresAt: Date | null
}

const columns = [
  'id',
  'user_id',
  'name',
  'prefix',
  'scopes',
  'created_at',
  'expires_at',
  'last_used_at',
  'revoked_at',
]

export function createApiKeysRepository(db: Queryable) {
  return {
    async insert(key: NewApiKey, sql: Queryable = db): Promise<ApiKeyRecord> {
      const [row] = await sql<ApiKeyRecord[]>`
        insert into api_keys ${sql({
          user_id: key.userId,
          name: key.name,
          prefix: key.prefix,
          key_hash: key.keyHash,
          scopes: sql.array(key.scopes),
          expires_at: key.expiresAt,
        })}
        returning ${sql(columns)}`
      if (!row) throw new Error('insert into api_keys returned no row')
      return row
    },

    async findById(id: string, sql: Queryable = db): Promise<ApiKeyRecord | undefined> {
      const [row] = await sql<ApiKeyRecord[]>`select ${sql(columns)} from api_keys where id = ${id}`
      return row
    },

    async findCredential(prefix: string, sql: Queryable = db): Promise<ApiKeyCredential | undefined> {
      const [row] = await sql<ApiKeyCredential[]>`
        select ${sql(columns.map((column) => `k.${column}`))}, k.key_hash,
               u.role as owner_role, u.status as owner_status, u.name as owner_name, u.email as owner_email,
               u.email_verified as owner_email_verified
        from api_keys k join users u on u.id = k.user_id
        where k.prefix = ${prefix}`
      return row
    },

    /** One user's keys, newest first, and how many there are. */
    async listByUser(
      userId: string,
      page: { offset: number; limit: number },
      sql: Queryable = db,
    ): Promise<{ rows: ApiKeyRecord[]; total: number }> {
      const [rows, [count]] = await Promise.all([
        sql<ApiKeyRecord[]>`
          select ${sql(columns)} from api_keys where user_id = ${userId}
          order by created_at desc, id limit ${page.limit} offset ${page.offset}`,
        sql<{ total: number }[]>`select count(*)::int as total from api_keys where user_id = ${userId}`,
      ])
      return { rows, total: count?.total ?? 0 }
    },

    /** Marks the key revoked (once: a second revocation keeps the first time). */
    async revoke(id: string, sql: Queryable = db): Promise<ApiKeyRecord | undefined> {
      const [row] = await sql<ApiKeyRecord[]>`
        update api_keys set revoked_at = coalesce(revoked_at, now()) where id = ${id}
        returning ${sql(columns)}`
      return row
    },

    /** Records a use, at most once a minute per key: a busy key must not cost a write per request. */
    async touch(id: string, sql: Queryable = db): Promise<void> {
      await sql`
        update api_keys set last_used_at = now()
        where id = ${id} and (last_used_at is null or last_used_at < now() - interval '1 minute')`
    },
  }
}

export type ApiKeysRepository = ReturnType<typeof createApiKeysRepository>
