// The order saga for operators (admins only): the instances filtered by state or compensation, one with its step
// log, and the two actions: ask the awaited step again, or run the compensations. Registered under /api/v1 and /api.
// Deprecated: an alias of /admin/processes (type `order`) in the saga's own shape, reading the same rows.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { CompensateSagaBody, Paginated, Saga, SagaListQuery, SagaParams } from '@meridian/contracts'
import { auditSourceOf, authenticatedPrincipal, errorResponses, security } from '@meridian/service-kit'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { SagaFacade } from '../../domain/saga-facade.ts'

export interface AdminSagasRoutesOptions {
  saga: Pick<SagaFacade, 'listSagas' | 'getSaga' | 'retry' | 'compensate'>
  /** onRequest of every route: authenticated, and an admin */
  adminOnly: onRequestHookHandler[]
}

/** Credentials first (401 before any validation answers), then the admin role (403). */
export function adminOnly(app: FastifyInstance): onRequestHookHandler[] {
  return [app.authenticate as onRequestHookHandler, app.requireRole('admin') as onRequestHookHandler]
}

export const adminSagasRoutes: FastifyPluginAsyncTypebox<AdminSagasRoutesOptions> = async (
  app,
  { saga, adminOnly: onRequest },
) => {
  const tags = ['sagas']

  app.get(
    '/admin/sagas',
    {
      onRequest,
      schema: {
        tags,
        // an alias of /admin/processes/order, in the saga's own shape: kept for its clients, not extended
        deprecated: true,
        summary: "The order saga's instances, newest first; filter by state or compensation (admins)",
        security: security.requires('admin:read'),
        querystring: SagaListQuery,
        response: { 200: Paginated(Saga), ...errorResponses(401, 403, 422) },
      },
    },
    (request) => saga.listSagas(request.query, request.url.split('?')[0] ?? request.url),
  )

  app.get(
    '/admin/sagas/:orderId',
    {
      onRequest,
      schema: {
        tags,
        // an alias of /admin/processes/order, in the saga's own shape: kept for its clients, not extended
        deprecated: true,
        summary: "An order's saga with its step log (admins)",
        security: security.requires('admin:read'),
        params: SagaParams,
        response: { 200: Saga, ...errorResponses(401, 403, 404) },
      },
    },
    (request) => saga.getSaga(request.params.orderId),
  )

  app.post(
    '/admin/sagas/:orderId/retry',
    {
      onRequest,
      schema: {
        tags,
        // an alias of /admin/processes/order, in the saga's own shape: kept for its clients, not extended
        deprecated: true,
        summary:
          'Ask the awaited step again now (an escalated compensation starts its attempts over); 409 when none is awaited',
        security: security.requires('admin:write'),
        params: SagaParams,
        response: { 202: Saga, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await saga.retry(request.params.orderId, auditSourceOf(request, authenticatedPrincipal(request))),
        ),
  )

  app.post(
    '/admin/sagas/:orderId/compensate',
    {
      onRequest,
      schema: {
        tags,
        // an alias of /admin/processes/order, in the saga's own shape: kept for its clients, not extended
        deprecated: true,
        summary:
          'Run the compensations (release the stock, then refund): a running saga fails now, an undone one is undone again; 409 once shipped or while they run',
        security: security.requires('admin:write'),
        params: SagaParams,
        body: CompensateSagaBody,
        response: { 202: Saga, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await saga.compensate(
            request.params.orderId,
            auditSourceOf(request, authenticatedPrincipal(request)),
            request.body?.reason,
          ),
        ),
  )
}
