// Exchanges: ask for one (POST /orders/{id}/exchanges), an order's list, one exchange, and its goods received (an
// admin). Registered under /api/v1 and /api; the guards are the returns' (a credential; admins receive).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Exchange, ExchangeParams, OrderIdParams, RequestExchangeBody } from '@meridian/contracts'
import { auditSourceOf, authenticatedPrincipal, errorResponses, security } from '@meridian/service-kit'
import { Type } from 'typebox'
import { exchangeHref } from '../../domain/exchange-process.ts'
import type { ExchangeUseCases } from '../../domain/exchanges.ts'
import type { ReturnsGuards } from '../returns/access.ts'

export interface ExchangesRoutesOptions {
  exchanges: ExchangeUseCases
  guards: Pick<ReturnsGuards, 'authenticated' | 'admin'>
}

export const exchangesRoutes: FastifyPluginAsyncTypebox<ExchangesRoutesOptions> = async (
  app,
  { exchanges, guards },
) => {
  const tags = ['exchanges']

  app.post(
    '/orders/:id/exchanges',
    {
      onRequest: guards.authenticated,
      schema: {
        tags,
        summary:
          'Exchange lines of a shipped or delivered order for other products (its customer or an admin): 202 with the exchange and its Location; 422 names a line that cannot be exchanged, 409 when the order has not shipped',
        description:
          "The replacements are reserved first (none in stock: the exchange fails and nothing is charged); a price rise is charged with `paymentToken` or the order's payment method; once an admin receives the goods their stock goes back, a price fall is refunded on the order and the replacements ship.",
        security: security.requires('orders:write'),
        params: OrderIdParams,
        body: RequestExchangeBody,
        response: { 202: Exchange, ...errorResponses(400, 401, 403, 404, 409, 422, 502, 503) },
      },
    },
    async (request, reply) => {
      const created = await exchanges.requestExchange(
        request.params.id,
        request.body,
        authenticatedPrincipal(request),
        request.id,
      )
      return reply.code(202).header('location', exchangeHref(created.exchangeId)).send(created)
    },
  )

  app.get(
    '/orders/:id/exchanges',
    {
      onRequest: guards.authenticated,
      schema: {
        tags,
        summary: "The order's exchanges, newest first (its customer or an admin)",
        security: security.requires('orders:read'),
        params: OrderIdParams,
        response: { 200: Type.Object({ data: Type.Array(Exchange) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({
      data: await exchanges.listOrderExchanges(request.params.id, authenticatedPrincipal(request)),
    }),
  )

  app.get(
    '/exchanges/:exchangeId',
    {
      onRequest: guards.authenticated,
      schema: {
        tags,
        summary: 'An exchange (its customer or an admin)',
        security: security.requires('orders:read'),
        params: ExchangeParams,
        response: { 200: Exchange, ...errorResponses(401, 403, 404) },
      },
    },
    (request) => exchanges.getExchange(request.params.exchangeId, authenticatedPrincipal(request)),
  )

  app.post(
    '/exchanges/:exchangeId/receive',
    {
      onRequest: guards.admin,
      schema: {
        tags,
        summary:
          "The exchange's returned goods were received (admins): their stock goes back, a price fall is refunded, the replacements ship; again, the same answer and nothing moves twice; 409 before the replacements are held or after the exchange failed",
        security: security.requires('admin:write'),
        params: ExchangeParams,
        response: { 202: Exchange, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const audit = auditSourceOf(request, authenticatedPrincipal(request))
      return reply.code(202).send(await exchanges.receive(request.params.exchangeId, audit))
    },
  )
}
