// Returns: ask for one (POST /orders/{id}/returns), an order's list, one return, and the two acts on it — the goods
// received (an admin or a carrier), or rejected before receipt (an admin). Registered under /api/v1 and /api.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CarrierKeyHeader,
  OrderIdParams,
  Paginated,
  RejectReturnBody,
  RequestReturnBody,
  Return,
  ReturnListQuery,
  ReturnParams,
} from '@meridian/contracts'
import { auditSourceOf, authenticatedPrincipal, errorResponses, security } from '@meridian/service-kit'
import { type ReturnUseCases, returnHref } from '../../domain/returns.ts'
import type { ReturnsGuards } from './access.ts'

export interface ReturnsRoutesOptions {
  returns: ReturnUseCases
  guards: ReturnsGuards
}

export const returnsRoutes: FastifyPluginAsyncTypebox<ReturnsRoutesOptions> = async (
  app,
  { returns, guards },
) => {
  const tags = ['returns']

  app.post(
    '/orders/:id/returns',
    {
      onRequest: guards.authenticated,
      schema: {
        tags,
        summary:
          'Return lines of a shipped or delivered order (its customer or an admin): 202 with the return and its Location; 422 names a line asked beyond what can be returned, 409 when the order has not shipped',
        security: security.requires('orders:write'),
        params: OrderIdParams,
        body: RequestReturnBody,
        response: { 202: Return, ...errorResponses(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const created = await returns.requestReturn(
        request.params.id,
        request.body,
        authenticatedPrincipal(request),
      )
      return reply.code(202).header('location', returnHref(created.returnId)).send(created)
    },
  )

  app.get(
    '/orders/:id/returns',
    {
      onRequest: guards.authenticated,
      schema: {
        tags,
        summary: "The order's returns, newest first (its customer or an admin)",
        security: security.requires('orders:read'),
        params: OrderIdParams,
        querystring: ReturnListQuery,
        response: { 200: Paginated(Return), ...errorResponses(401, 403, 404, 422) },
      },
    },
    (request) =>
      returns.listOrderReturns(
        request.params.id,
        request.query,
        authenticatedPrincipal(request),
        request.url.split('?')[0] ?? request.url,
      ),
  )

  app.get(
    '/returns/:returnId',
    {
      onRequest: guards.authenticated,
      schema: {
        tags,
        summary: 'A return (its customer or an admin)',
        security: security.requires('orders:read'),
        params: ReturnParams,
        response: { 200: Return, ...errorResponses(401, 403, 404) },
      },
    },
    (request) => returns.getReturn(request.params.returnId, authenticatedPrincipal(request)),
  )

  app.post(
    '/returns/:returnId/receive',
    {
      onRequest: guards.carrierOrAdmin,
      schema: {
        tags,
        summary:
          "The return's goods were received (an admin, or a carrier with X-Carrier-Key): the stock goes back, then exactly its lines are refunded; again, the same answer and nothing moves twice",
        description:
          'A carrier sends its key in X-Carrier-Key (RETURNS_CARRIER_KEYS, name=key; a wrong key is 401) and receives only the returns that name it as their carrier (another is 404); without the header, an admin credential is needed (anyone else, the customer too, is 403). Who received it is recorded. A rejected return is 409.',
        security: security.requires('admin:write'),
        params: ReturnParams,
        headers: CarrierKeyHeader,
        response: { 202: Return, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const receiver = await guards.receiverOf(request)
      const audit = auditSourceOf(
        request,
        'carrier' in receiver ? `carrier:${receiver.carrier}` : receiver.admin,
      )
      return reply.code(202).send(await returns.receive(request.params.returnId, receiver, audit))
    },
  )

  app.post(
    '/returns/:returnId/reject',
    {
      onRequest: guards.admin,
      schema: {
        tags,
        summary: 'Reject a return before its goods are received (admins); 409 once they were',
        security: security.requires('admin:write'),
        params: ReturnParams,
        body: RejectReturnBody,
        response: { 202: Return, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const audit = auditSourceOf(request, authenticatedPrincipal(request))
      return reply.code(202).send(await returns.reject(request.params.returnId, request.body.reason, audit))
    },
  )
}
