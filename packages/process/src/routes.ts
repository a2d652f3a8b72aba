// The operators' API for every declared process (admins only), registered by the owning service under /api/v1 and
// /api: the types, the instances filtered by type, state, compensation or escalation, one with its step log, and the
// two actions — ask the awaited step again, or run the compensations.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CompensateProcessBody,
  Paginated,
  ProcessInstance,
  ProcessListQuery,
  ProcessParams,
  ProcessTypes,
} from '@meridian/contracts'
import { auditSourceOf, authenticatedPrincipal, errorResponses, security } from '@meridian/service-kit'
import type { onRequestHookHandler } from 'fastify'
import type { ProcessManager } from './manager.ts'

export interface AdminProcessesRoutesOptions {
  processes: Pick<ProcessManager, 'types' | 'list' | 'get' | 'retry' | 'compensate'>
  /** onRequest of every route: authenticated, and an admin */
  adminOnly: onRequestHookHandler[]
}

export const adminProcessesRoutes: FastifyPluginAsyncTypebox<AdminProcessesRoutesOptions> = async (
  app,
  { processes, adminOnly: onRequest },
) => {
  const tags = ['processes']

  app.get(
    '/admin/processes/types',
    {
      onRequest,
      schema: {
        tags,
        summary: 'The process types this service runs: their states and steps (admins)',
        security: security.requires('admin:read'),
        response: { 200: ProcessTypes, ...errorResponses(401, 403) },
      },
    },
    () => ({ data: processes.types() }),
  )

  app.get(
    '/admin/processes',
    {
      onRequest,
      schema: {
        tags,
        summary:
          'Every process instance, newest first; filter by type, state, compensation or escalated (admins)',
        security: security.requires('admin:read'),
        querystring: ProcessListQuery,
        response: { 200: Paginated(ProcessInstance), ...errorResponses(401, 403, 404, 422) },
      },
    },
    (request) => processes.list(request.query, request.url.split('?')[0] ?? request.url),
  )

  app.get(
    '/admin/processes/:type/:id',
    {
      onRequest,
      schema: {
        tags,
        summary: 'One instance with its step log (admins)',
        security: security.requires('admin:read'),
        params: ProcessParams,
        response: { 200: ProcessInstance, ...errorResponses(401, 403, 404) },
      },
    },
    (request) => processes.get(request.params.type, request.params.id),
  )

  app.post(
    '/admin/processes/:type/:id/retry',
    {
      onRequest,
      schema: {
        tags,
        summary:
          'Ask the awaited step again now (an escalated one starts its attempts over); 409 when none is awaited',
        security: security.requires('admin:write'),
        params: ProcessParams,
        response: { 202: ProcessInstance, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await processes.retry(
            request.params.type,
            request.params.id,
            auditSourceOf(request, authenticatedPrincipal(request)),
          ),
        ),
  )

  app.post(
    '/admin/processes/:type/:id/compensate',
    {
      onRequest,
      schema: {
        tags,
        summary: "Run the instance's compensations as its process defines them; 409 when its state refuses",
        security: security.requires('admin:write'),
        params: ProcessParams,
        body: CompensateProcessBody,
        response: { 202: ProcessInstance, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await processes.compensate(
            request.params.type,
            request.params.id,
            request.body?.reason,
            auditSourceOf(request, authenticatedPrincipal(request)),
          ),
        ),
  )
}
