// Idempotency-Key records in PostgreSQL: SQL only. Inserting the 'running' row of a (scope, key) is the lock: the
// unique constraint lets exactly one request in; the others find its row.
import type { Queryable } from '@meridian/db'

export interface IdempotencyRecord {
  scope: string
  key: string
  requestHash: string
  status: 'running' | 'done'
  responseStatus: number | null
  responseBody: unknown
  createdAt: Date
  expiresAt: Date
}

export type ClaimResult = { claimed: true } | { claimed: false; existing: IdempotencyRecord }

export interface KeyClaim {
  scope: string
  key: string
  requestHash: string
  ttlSeconds: number
  /** a 'running' row older than this is taken over: its holder died mid-request */
  staleAfterSeconds: number
}

export function createIdempotencyKeysRepository(db: Queryable) {
  /**
   * Takes the key for a request: a new 'running' row, or the row of an expired key, or of a 'running' key whose
   * holder died. Otherwise the row that holds it.
   */
  async function claim(record: KeyClaim, sql: Queryable = db): Promise<ClaimResult> {
    const { scope, key, requestHash, ttlSeconds, staleAfterSeconds } = record
    const [taken] = await sql<{ key: string }[]>`
      insert into idempotency_keys as held (scope, key, request_hash, status, expires_at)
      values (${scope}, ${key}, ${requestHash}, 'running', now() + make_interval(secs => ${ttlSeconds}))
      on conflict (scope, key) do update
        set request_hash = excluded.request_hash, status = 'running', response_status = null,
          response_body = null, created_at = now(), expires_at = excluded.expires_at
        where held.expires_at <= now()
          or (held.status = 'running' and held.created_at < now() - make_interval(secs => ${staleAfterSeconds}))
      returning key`
    if (taken) return { claimed: true }
    const [existing] = await sql<IdempotencyRecord[]>`
      select scope, key, request_hash, status, response_status, response_body, created_at, expires_at
      from idempotency_keys where scope = ${scope} and key = ${key}`
    // released (a 5xx) between the two statements: try again
    if (!existing) return claim(record, sql)
    return { claimed: false, existing }
  }

  return {
    claim,

    /** Stores the outcome of the request holding the key; it is replayed from now on. */
    async complete(
      scope: string,
      key: string,
      response: { status: number; body: unknown },
      sql: Queryable = db,
    ): Promise<void> {
      await sql`
        update idempotency_keys
        set status = 'done', response_status = ${response.status},
          response_body = ${sql.json(response.body as Parameters<typeof sql.json>[0])}
        where scope = ${scope} and key = ${key} and status = 'running'`
    },

    /** Gives the key up (a 5xx outcome): a retry with it runs again. */
    async release(scope: string, key: string, sql: Queryable = db): Promise<void> {
      await sql`delete from idempotency_keys where scope = ${scope} and key = ${key} and status = 'running'`
    },

    /** Removes expired keys; the number removed. */
    async removeExpired(sql: Queryable = db): Promise<number> {
      const removed = await sql`delete from idempotency_keys where expires_at <= now()`
      return removed.count
    },
  }
}

export type IdempotencyKeysRepository = ReturnType<typeof createIdempotencyKeysRepository>
