// oidc-provider's storage adapter on PostgreSQL (table oidc_payloads, migration 0004): one instance per model name.
import type { Queryable } from '@meridian/db'
import type { Adapter, AdapterPayload } from 'oidc-provider'

interface PayloadRow {
  payload: AdapterPayload
  consumedAt: Date | null
}

const epochSeconds = (date: Date): number => Math.floor(date.getTime() / 1000)

/**
 * The provider stamps `consumed` (epoch seconds) on a consumed code or token; the row keeps it in its own column
 * so consume() is one update and a reused code is recognised (and its grant revoked) by the provider.
 * Expired rows are never returned, whatever the cleanup has not removed yet.
 */
const present = (row: PayloadRow | undefined): AdapterPayload | undefined =>
  row && (row.consumedAt ? { ...row.payload, consumed: epochSeconds(row.consumedAt) } : row.payload)

const textAt = (value: unknown, ...path: string[]): string | undefined => {
  let at: unknown = value
  for (const key of path)
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined
  return typeof at === 'string' ? at : undefined
}

/**
 * The user a row belongs to: the accountId of a session, grant, code or token, or the signed-in user of an
 * interaction (its session's, or its login result's). Kept in its own column so a user's rows end together.
 */
const accountOf = (payload: AdapterPayload): string | null =>
  textAt(payload, 'accountId') ??
  textAt(payload, 'session', 'accountId') ??
  textAt(payload, 'result', 'login', 'accountId') ??
  null

export function createPostgresAdapter(sql: Queryable, model: string): Adapter {
  // a fresh fragment per query: postgres.js fragments are not meant to be shared between queries
  const live = () => sql`(expires_at is null or expires_at > now())`
  /** The live payload of this model whose `column` (a user code or an interaction's uid) is `value`, newest first. */
  const latestBy = async (column: 'user_code' | 'uid', value: string) => {
    const [row] = await sql<PayloadRow[]>`
      select payload, consumed_at from oidc_payloads
      where model = ${model} and ${sql(column)} = ${value} and ${live()}
      order by expires_at desc nulls first limit 1`
    return present(row)
  }

  return {
    async upsert(id, payload, expiresIn) {
      const row = {
        model,
        id,
        payload: sql.json(payload as Parameters<typeof sql.json>[0]),
        grant_id: payload.grantId ?? null,
        user_code: payload.userCode ?? null,
        uid: payload.uid ?? null,
        account_id: accountOf(payload),
        expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      }
      await sql`
        insert into oidc_payloads ${sql(row)}
        on conflict (model, id) do update set
          payload = excluded.payload, grant_id = excluded.grant_id, user_code = excluded.user_code,
          uid = excluded.uid, account_id = excluded.account_id, expires_at = excluded.expires_at`
    },

    async find(id) {
      const [row] = await sql<PayloadRow[]>`
        select payload, consumed_at from oidc_payloads where model = ${model} and id = ${id} and ${live()}`
      return present(row)
    },

    findByUserCode: (userCode) => latestBy('user_code', userCode),
    findByUid: (uid) => latestBy('uid', uid),

    async consume(id) {
      await sql`update oidc_payloads set consumed_at = now() where model = ${model} and id = ${id}`
    },

    async destroy(id) {
      await sql`delete from oidc_payloads where model = ${model} and id = ${id}`
    },

    async revokeByGrantId(grantId) {
      await sql`delete from oidc_payloads where model = ${model} and grant_id = ${grantId}`
    },
  }
}

/** Removes rows that expired more than a minute ago; returns how many went. */
export async function deleteExpiredPayloads(sql: Queryable): Promise<number> {
  const result = await sql`delete from oidc_payloads where expires_at < now() - interval '1 minute'`
  return result.count
}

/**
 * Every provider row of a user: SSO sessions, grants, authorization and device codes, access and refresh tokens,
 * interactions in progress. Deleted, so the provider refuses the user's tokens (a refresh is invalid_grant, an
 * access token unknown to /userinfo) and asks them to sign in again.
 */
export function createProviderAccounts(db: Queryable) {
  return {
    /** Deletes them (in the caller's transaction, when given); returns how many rows went. */
    async endAllOf(accountId: string, sql: Queryable = db): Promise<number> {
      const result = await sql`delete from oidc_payloads where account_id = ${accountId}`
      return result.count
    },
  }
}
