// Signing keys in PostgreSQL: SQL only; the key ring decides what to create and when.
import type { JsonWebKey } from 'node:crypto'
import { type Queryable, type Sql, type TransactionSql, transaction } from '@meridian/db'

export interface StoredSigningKey {
  kid: string
  publicJwk: JsonWebKey
  /** see key-encryption.ts */
  privateKeyEncrypted: string
  createdAt: Date
  activatesAt: Date
}

/** Every auth instance rotates under this lock, so two of them never add a key for the same turn. */
const rotationLockName = 'meridian:auth:signing-keys'

export function createSigningKeysRepository(db: Sql) {
  return {
    async all(sql: Queryable = db): Promise<StoredSigningKey[]> {
      return sql<StoredSigningKey[]>`
        select kid, public_jwk, private_key_encrypted, created_at, activates_at
        from signing_keys order by activates_at`
    },

    async insert(key: StoredSigningKey, sql: Queryable = db): Promise<void> {
      await sql`
        insert into signing_keys ${sql({
          kid: key.kid,
          algorithm: 'RS256',
          public_jwk: sql.json(key.publicJwk as Parameters<typeof sql.json>[0]),
          private_key_encrypted: key.privateKeyEncrypted,
          created_at: key.createdAt,
          activates_at: key.activatesAt,
        })}`
    },

    /** The key's private part sealed again (SIGNING_KEY_ENCRYPTION_SECRET rotated): the same key, another sealing. */
    async reseal(kid: string, privateKeyEncrypted: string, sql: Queryable = db): Promise<void> {
      await sql`update signing_keys set private_key_encrypted = ${privateKeyEncrypted} where kid = ${kid}`
    },

    async remove(kids: string[], sql: Queryable = db): Promise<void> {
      if (kids.length > 0) await sql`delete from signing_keys where kid in ${sql(kids)}`
    },

    /** Runs `fn` in a transaction holding the rotation lock (released at commit or rollback). */
    async underRotationLock<T>(fn: (tx: TransactionSql) => Promise<T>): Promise<T> {
      return transaction(db, async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtext(${rotationLockName}))`
        return fn(tx)
      })
    },
  }
}

export type SigningKeysRepository = ReturnType<typeof createSigningKeysRepository>
