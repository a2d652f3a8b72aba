// Idempotency-Key records in PostgreSQL: SQL only. Inserting the 'running' row of a (scope, key) is the lock: the
// unique constraint lets exactly one request in; the others find its row. Each row carries the provider's
// Idempotency-Key of the request it holds: a new request (a new key, an expired one, another body) gets the one it
// brings; the same request running again (after a 5xx left the row 'released', or its holder died) keeps its own.
import type { Queryable } from '@meridian/db'

export interface IdempotencyRecord {
  scope: string
  key: string
  requestHash: string
  /** 'released': a 5xx outcome, not stored; the key runs again (with the same provider key for the same body) */
  status: 'running' | 'done' | 'released'
  responseStatus: number | null
  responseBody: unknown
  createdAt: Date
  expiresAt: Date
}

export type ClaimResult =
  /** the request holds the key; `providerKey` is the provider's Idempotency-Key it charges under */
  { claimed: true; providerKey: string } | { claimed: false; existing: IdempotencyRecord }

export interface KeyClaim {
  scope: string
  key: string
  requestHash: string
  /** the provider key of a new request, unique to it; kept instead when the same request runs again */
  providerKey: string
  ttlSeconds: number
  /** a 'running' row older than this is taken over: its holder died mid-request */
  staleAfterSeconds: number
}

export function createIdempotencyKeysRepository(db: Queryable) {
  /**
   * Takes the key for a request: a new 'running' row, or the row of an expired key, of a released key (its last
   * outcome was a 5xx), or of a 'running' key whose holder died. Otherwise the row that holds it. The provider key is
   * the claim's own, except for the same body on a key that has not expired: that request runs again and keeps the
   * provider key it was sent with (the provider answers its first outcome, never a second charge).
   */
  async function claim(record: KeyClaim, sql: Queryable = db): Promise<ClaimResult> {
    const { scope, key, requestHash, providerKey, ttlSeconds, staleAfterSeconds } = record
    const [taken] = await sql<{ providerKey: string }[]>`
      insert into idempotency_keys as held (scope, key, request_hash, status, expires_at, provider_key)
      values (${scope}, ${key}, ${requestHash}, 'running', now() + make_interval(secs => ${ttlSeconds}),
        ${providerKey})
      on conflict (scope, key) do update
        set request_hash = excluded.request_hash, status = 'running', response_status = null,
          response_body = null, created_at = now(), expires_at = excluded.expires_at,
          provider_key = case
            when held.expires_at > now() and held.request_hash = excluded.request_hash then held.provider_key
            else excluded.provider_key
          end
        where held.expires_at <= now()
          or held.status = 'released'
          or (held.status = 'running' and held.created_at < now() - make_interval(secs => ${staleAfterSeconds}))
      returning provider_key`
    if (taken) return { claimed: true, providerKey: taken.providerKey }
    const [existing] = await sql<IdempotencyRecord[]>`
      select scope, key, request_hash, status, response_status, response_body, created_at, expires_at
      from idempotency_keys where scope = ${scope} and key = ${key}`
    // released (a 5xx) or removed (expired) between the two statements: try again
    if (!existing || existing.status === 'released') return claim(record, sql)
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

    /**
     * Gives the key up without an outcome (a 5xx, or a request refused before it ran): a retry with it runs again.
     * The row stays 'released' with its provider key, which the same request keeps when it comes again.
     */
    async release(scope: string, key: string, sql: Queryable = db): Promise<void> {
      await sql`
        update idempotency_keys set status = 'released'
        where scope = ${scope} and key = ${key} and status = 'running'`
    },

    /** Removes expired keys; the number removed. */
    async removeExpired(sql: Queryable = db): Promise<number> {
      const removed = await sql`delete from idempotency_keys where expires_at <= now()`
      return removed.count
    },
  }
}

export type IdempotencyKeysRepository = ReturnType<typeof createIdempotencyKeysRepository>
