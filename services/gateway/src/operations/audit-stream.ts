// The gateway's own audit trail: what operators and admins do through the routes the gateway serves itself (a
// service's maintenance switched on or off, dead letters replayed). The gateway keeps no database, so its trail is a
// Redis stream: appended with XADD, read with XREVRANGE, never trimmed and never changed by any route. The stream id
// orders the entries and gives their time: `at` is its milliseconds with its sequence as the microseconds, so the text
// sorts as the trail does (like a service's, from PostgreSQL) and `before` (the next page's cursor) is exact.
import type { AuditEntry, AuditQuery } from '@meridian/contracts'
import {
  type AuditRecord,
  type AuditSource,
  auditSourceOf,
  authenticatedPrincipal,
} from '@meridian/service-kit'
import type { FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'

export interface GatewayAuditTrail {
  /** appends the entry; the action it records is done first, and is not undone when this fails */
  append(source: AuditSource, record: AuditRecord): Promise<void>
  /** a page, newest first: `limit` entries older than `before`, of one action or actor if asked */
  read(query: AuditQuery): Promise<AuditEntry[]>
}

/** How many entries one read looks at, at most, to fill a page of one action or actor (a bounded scan). */
export const auditScanLimit = 5000
const batch = 200

/** A stream id's time as a timestamp: its milliseconds, its sequence (under 1000 in one millisecond) as microseconds. */
export function atOfStreamId(id: string): string {
  const [ms = '0', sequence = '0'] = id.split('-')
  const iso = new Date(Number(ms)).toISOString()
  return `${iso.slice(0, -1)}${sequence.padStart(3, '0').slice(-3)}Z`
}

/**
 * The stream id just under which entries are older than `before` (a date-time; its micro­seconds are kept), or
 * undefined when none can be: a time before 1970 (a stream id's milliseconds start there; Redis refuses a negative
 * one). A leap second (`23:59:60`, a valid date-time that Date.parse refuses) is the next minute's first.
 */
export function streamIdBefore(before: string): string | undefined {
  const leap = /T(\d{2}):(\d{2}):60/.test(before)
  const ms = Date.parse(leap ? before.replace(/:60(?=[.Zz+-]|$)/, ':59') : before) + (leap ? 1000 : 0)
  if (!(ms >= 0)) return undefined
  const micros = /\.\d{3}(\d{1,3})/.exec(before)?.[1]?.padEnd(3, '0') ?? '000'
  return `(${ms}-${Number(micros)}`
}

export function redisAuditTrail(redis: Redis, key = 'gateway:audit'): GatewayAuditTrail {
  return {
    async append(source, record) {
      const entry = {
        actor: source.actor,
        action: record.action,
        target: record.target,
        detail: record.detail ?? {},
        ...(source.address === undefined ? {} : { address: source.address }),
        ...(source.requestId === undefined ? {} : { requestId: source.requestId }),
      }
      await redis.xadd(key, '*', 'entry', JSON.stringify(entry))
    },
    async read(query) {
      const found: AuditEntry[] = []
      const first = query.before === undefined ? '+' : streamIdBefore(query.before)
      // nothing in the trail is older than 1970
      if (first === undefined) return found
      let end: string = first
      for (let scanned = 0; found.length < query.limit && scanned < auditScanLimit; scanned += batch) {
        const rows = await redis.xrevrange(key, end, '-', 'COUNT', batch)
        for (const [id, fields] of rows) {
          const stored = JSON.parse(fields[1] ?? '{}') as Omit<AuditEntry, 'service' | 'id' | 'at'>
          const matches =
            (query.action === undefined || stored.action === query.action) &&
            (query.actor === undefined || stored.actor === query.actor)
          if (matches && found.length < query.limit)
            found.push({ service: 'gateway', id, at: atOfStreamId(id), ...stored })
        }
        const oldest = rows.at(-1)
        if (rows.length < batch || oldest === undefined) break
        end = `(${oldest[0]}`
      }
      return found
    },
  }
}

/**
 * Appends what the admin behind `request` did, after it was done. When Redis fails, the entry goes to the log (error
 * level, every field) and the action stands: the gateway has no transaction to undo it in.
 */
export async function recordAction(
  trail: GatewayAuditTrail,
  request: FastifyRequest,
  record: AuditRecord,
): Promise<void> {
  const source = auditSourceOf(request, authenticatedPrincipal(request))
  try {
    await trail.append(source, record)
  } catch (error) {
    request.log.error(
      { err: error, audit: { ...source, ...record } },
      'the audit entry could not be appended to the trail: this line keeps it',
    )
  }
}
