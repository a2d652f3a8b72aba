// The audit trail of a service (audit-migrations/: its append-only table): an entry appended in the transaction of the
// change it records, and the trail read back, newest first, for GET /api/v1/admin/audit/{service}. Who is a string
// the principal gives (`user:<id>`, `api-key:<id>`, `client:<id>`) or a carrier (`carrier:<name>`); from where and
// under which request come from the request.
import { fileURLToPath } from 'node:url'
import type { AuditEntry, AuditQuery } from '@meridian/contracts'
import { migrationTrack, type Queryable } from '@meridian/db'
import type { Principal } from '../auth/principal.ts'

export const auditMigrationsDir = fileURLToPath(new URL('../../audit-migrations', import.meta.url))

/** Creates or updates the audit table (its own migration track; idempotent, safe from many instances). */
export const migrateAuditLog = migrationTrack(auditMigrationsDir, 'audit_schema_migrations')

/** Who did it, from where, under which request: what the route knows and the use case passes on. */
export interface AuditSource {
  actor: string
  address?: string
  requestId?: string
}

/** What was done, to what, and what changed (never a secret: no token, key, password or card number). */
export interface AuditRecord {
  action: string
  target: string
  detail?: Record<string, unknown>
}

/** The actor a principal is: its API key, its OAuth client, or its user. */
export const actorOf = (principal: Principal): string =>
  principal.apiKeyId !== undefined
    ? `api-key:${principal.apiKeyId}`
    : principal.kind === 'client'
      ? `client:${principal.subject}`
      : `user:${principal.subject}`

/** The source of a request's action: `actor` (a principal's, or a carrier's) with the request's address and id. */
export const auditSourceOf = (
  request: { ip: string; id: string },
  actor: Principal | string,
): AuditSource => ({
  actor: typeof actor === 'string' ? actor : actorOf(actor),
  address: request.ip,
  requestId: request.id,
})

/** Appends the entry; in the change's own transaction, so the change is never kept without it. */
export async function appendAudit(sql: Queryable, source: AuditSource, record: AuditRecord): Promise<void> {
  await sql`
    insert into audit_log (actor, action, target, detail, address, request_id)
    values (${source.actor}, ${record.action}, ${record.target}, ${sql.json((record.detail ?? {}) as never)},
      ${source.address ?? null}, ${source.requestId ?? null})`
}

interface AuditRow {
  id: string
  at: string
  actor: string
  action: string
  target: string
  detail: Record<string, unknown>
  address: string | null
  requestId: string | null
}

/** A page of the trail, newest first: `limit` entries older than `before`, of one action or actor if asked. */
export async function readAudit(sql: Queryable, service: string, query: AuditQuery): Promise<AuditEntry[]> {
  // the cursor keeps the microseconds PostgreSQL keeps: a millisecond's cut would skip entries of the same millisecond
  // (sent as text: a parameter typed timestamptz would go through a JavaScript Date, which keeps milliseconds only)
  const older = query.before === undefined ? sql`true` : sql`at < (${query.before}::text)::timestamptz`
  const ofAction = query.action === undefined ? sql`true` : sql`action = ${query.action}`
  const ofActor = query.actor === undefined ? sql`true` : sql`actor = ${query.actor}`
  const rows = await sql<AuditRow[]>`
    select id::text as id, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, actor, action, target, detail, address,
      request_id as "requestId"
    from audit_log
    where ${older} and ${ofAction} and ${ofActor}
    order by audit_log.at desc, audit_log.id desc
    limit ${query.limit}`
  return rows.map((row) => ({
    service,
    id: row.id,
    at: row.at,
    actor: row.actor,
    action: row.action,
    target: row.target,
    detail: row.detail,
    ...(row.address === null ? {} : { address: row.address }),
    ...(row.requestId === null ? {} : { requestId: row.requestId }),
  }))
}

/** The query of the page after `page` (older entries), or null when it was the last. */
export function nextAuditQuery(page: readonly AuditEntry[], query: AuditQuery): string | null {
  const oldest = page.at(-1)
  if (page.length < query.limit || oldest === undefined) return null
  const next = new URLSearchParams({ limit: String(query.limit), before: oldest.at })
  if (query.action !== undefined) next.set('action', query.action)
  if (query.actor !== undefined) next.set('actor', query.actor)
  return next.toString()
}
