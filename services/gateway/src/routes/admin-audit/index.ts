// GET /api/v1/admin/audit (admins): every service's audit trail in one, newest first. Each service keeps its own
// (GET /api/v1/admin/audit/{service}, routed like any path); this reads a page of each through the gateway itself, as
// the caller (their credential, their request id), and merges them with the gateway's own (GET
// /api/v1/admin/audit/gateway: its maintenance switches and dead-letter replays, kept in a Redis stream). A service
// that does not answer is named in `unavailable`, and the rest is still shown.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AuditPage, AuditQuery, MergedAuditPage } from '@meridian/contracts'
import { errorResponses, nextAuditQuery, security } from '@meridian/service-kit'
import type { onRequestHookHandler } from 'fastify'
import { auditScanLimit, type GatewayAuditTrail } from '../../operations/audit-stream.ts'

export interface AdminAuditOptions {
  /** each service's own trail: its path, e.g. /api/v1/admin/audit/order (the route table's) */
  trails: readonly string[]
  /** the gateway's own trail (its maintenance switches, dead-letter replays), at /api/v1/admin/audit/gateway */
  own: GatewayAuditTrail
}

const ownTrailPath = '/api/v1/admin/audit/gateway'

/** The caller's credentials, passed on as they came: the services decide, as for any request of theirs. */
const credentialHeaders = ['authorization', 'cookie'] as const

export const adminAuditRoutes: FastifyPluginAsyncTypebox<AdminAuditOptions> = async (
  app,
  { trails, own },
) => {
  const adminOnly = [app.authenticate, app.requireRole('admin')] as onRequestHookHandler[]
  app.get(
    ownTrailPath,
    {
      onRequest: adminOnly,
      schema: {
        tags: ['operations'],
        summary:
          "What operators and admins did through the gateway's own routes: maintenance switches, dead-letter replays (admins)",
        description: `Newest first; \`next\` is the query of the next, older page. The gateway keeps no database: its trail is a Redis stream that no route trims or changes. A page of one action or actor looks at the ${auditScanLimit} entries before \`before\` at most.`,
        security: security.requires('admin:read'),
        querystring: AuditQuery,
        response: { 200: AuditPage, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => {
      const data = await own.read(request.query)
      return { data, next: nextAuditQuery(data, request.query) }
    },
  )
  app.get(
    '/api/v1/admin/audit',
    {
      onRequest: adminOnly,
      schema: {
        tags: ['operations'],
        summary: "What operators and admins did, every service's audit trail merged, newest first (admins)",
        description:
          'Each service keeps its own trail (GET /api/v1/admin/audit/{service}); this reads a page of each as the caller and merges them. `next` is the query of the next, older page; a service that does not answer is named in `unavailable`.',
        security: security.requires('admin:read'),
        querystring: AuditQuery,
        response: { 200: MergedAuditPage, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => {
      const query = new URLSearchParams({ limit: String(request.query.limit) })
      for (const name of ['before', 'action', 'actor'] as const) {
        const value = request.query[name]
        if (value !== undefined) query.set(name, value)
      }
      const headers: Record<string, string> = { 'x-request-id': request.id }
      for (const name of credentialHeaders) {
        const value = request.headers[name]
        if (typeof value === 'string') headers[name] = value
      }
      const unavailable: string[] = []
      const pages = await Promise.all(
        [ownTrailPath, ...trails].map(async (trail) => {
          const answer = await app.inject({ method: 'GET', url: `${trail}?${query}`, headers })
          if (answer.statusCode !== 200) {
            unavailable.push(trail.slice(trail.lastIndexOf('/') + 1))
            return []
          }
          return (answer.json() as AuditPage).data
        }),
      )
      // at is UTC with microseconds, one format: its text sorts as its time
      const data = pages
        .flat()
        .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.service.localeCompare(b.service)))
        .slice(0, request.query.limit)
      return { data, next: nextAuditQuery(data, request.query), unavailable: unavailable.sort() }
    },
  )
}
