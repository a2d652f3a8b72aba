// GET /api/v1/admin/audit/{service} (admins; also under /api): the service's audit trail, newest first, a page at a
// time. The gateway's GET /api/v1/admin/audit reads every service's and merges them. Nothing changes an entry.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AuditPage, AuditQuery } from '@meridian/contracts'
import type { Queryable } from '@meridian/db'
import type { onRequestHookHandler } from 'fastify'
import { registerVersionedApi, type ServiceApp } from '../app.ts'
import { errorResponses, security } from '../openapi.ts'
import { nextAuditQuery, readAudit } from './audit-log.ts'

interface AuditRoutesOptions {
  sql: Queryable
  service: string
}

const auditRoutes: FastifyPluginAsyncTypebox<AuditRoutesOptions> = async (app, { sql, service }) => {
  // credentials first (401 before any validation answers), then the admin role (403)
  const onRequest = [app.authenticate, app.requireRole('admin')] as onRequestHookHandler[]
  app.get(
    `/admin/audit/${service}`,
    {
      onRequest,
      schema: {
        tags: ['audit'],
        summary: `What operators and admins did in ${service}: who, what, when, from where, under which request (admins)`,
        description:
          'Newest first; `next` is the query of the next, older page. Entries are appended in the transaction of the change they record and never changed: no route updates or deletes one.',
        security: security.requires('admin:read'),
        querystring: AuditQuery,
        response: { 200: AuditPage, ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => {
      const data = await readAudit(sql, service, request.query)
      return { data, next: nextAuditQuery(data, request.query) }
    },
  )
}

/** The service's audit trail at /api/v1/admin/audit/{service}, for admins (its table: migrateAuditLog). */
export function registerAuditTrail(app: ServiceApp, options: AuditRoutesOptions): Promise<void> {
  return registerVersionedApi(app, auditRoutes, { ...options })
}
