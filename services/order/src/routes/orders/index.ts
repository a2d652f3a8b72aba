// Orders: placing one (POST /orders, POST /users/{userId}/orders), reading one in its hypermedia form, a user's
// list, and cancelling. Registered at the root (the spec's paths) and under /api/v1 and /api (registerVersionedApi).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AppError,
  CancelledOrder,
  CustomerOrderParams,
  Order,
  OrderCustomerParams,
  OrderIdParams,
  Paginated,
  PlacedOrder,
  PlaceOrderBody,
  PlaceUserOrderBody,
  UserOrderListQuery,
} from '@meridian/contracts'
import { authenticatedPrincipal, errorResponses, security } from '@meridian/service-kit'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { assertCustomerOrAdmin } from '../../domain/access.ts'
import { type OrderUseCases, orderHref } from '../../domain/orders.ts'

/** Who may call (see access.ts); without guards every route is open (and answers 401 for want of a principal). */
export interface OrdersGuards {
  /** onRequest of every route: a credential is required */
  authenticated?: onRequestHookHandler[]
}

export interface OrdersRoutesOptions {
  orders: OrderUseCases
  guards?: OrdersGuards
}

export const ordersRoutes: FastifyPluginAsyncTypebox<OrdersRoutesOptions> = async (
  app,
  { orders, guards = {} },
) => {
  const tags = ['orders']
  const onRequest = guards.authenticated ?? []

  async function place(
    request: FastifyRequest,
    reply: FastifyReply,
    body: PlaceOrderBody,
  ): Promise<FastifyReply> {
    const principal = authenticatedPrincipal(request)
    assertCustomerOrAdmin(principal, body.customerId)
    const { order, placed } = await orders.placeOrder(body, principal, request.id)
    return reply.code(201).header('location', orderHref(order.id)).send(placed)
  }

  app.post(
    '/orders',
    {
      onRequest,
      schema: {
        tags,
        summary:
          'Place an order (the customer, or an admin for anyone): priced from the catalogue, 201 with Location',
        security: security.requires('orders:write'),
        body: PlaceOrderBody,
        response: { 201: PlacedOrder, ...errorResponses(401, 403, 422, 502, 503) },
      },
    },
    (request, reply) => place(request, reply, request.body),
  )

  app.post(
    '/users/:userId/orders',
    {
      onRequest,
      schema: {
        tags,
        summary: "Place an order for the user (customerId, when sent, must be the path's userId)",
        security: security.requires('orders:write'),
        params: OrderCustomerParams,
        body: PlaceUserOrderBody,
        response: { 201: PlacedOrder, ...errorResponses(401, 403, 422, 502, 503) },
      },
    },
    (request, reply) => {
      const { userId } = request.params
      const { customerId } = request.body
      // who the caller may act for first: another customer's path is a 403 whatever the body says
      assertCustomerOrAdmin(authenticatedPrincipal(request), userId)
      if (customerId !== undefined && customerId.toLowerCase() !== userId.toLowerCase()) {
        throw AppError.validation([
          { field: 'customerId', message: 'must be the userId of the path', received: customerId },
        ])
      }
      return place(request, reply, { ...request.body, customerId: userId })
    },
  )

  app.get(
    '/users/:userId/orders',
    {
      onRequest,
      schema: {
        tags,
        summary: "The user's orders (the user or an admin): page, limit, sort createdAt|total, status filter",
        security: security.requires('orders:read'),
        params: OrderCustomerParams,
        querystring: UserOrderListQuery,
        response: { 200: Paginated(Order), ...errorResponses(401, 403, 422) },
      },
    },
    async (request) => {
      const { userId } = request.params
      assertCustomerOrAdmin(authenticatedPrincipal(request), userId)
      return orders.listCustomerOrders(userId, request.query, request.url.split('?')[0] ?? request.url)
    },
  )

  app.get(
    '/users/:userId/orders/:orderId',
    {
      onRequest,
      schema: {
        tags,
        summary: "One of the user's orders with its links (the user or an admin)",
        security: security.requires('orders:read'),
        params: CustomerOrderParams,
        response: { 200: Order, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { userId, orderId } = request.params
      const principal = authenticatedPrincipal(request)
      assertCustomerOrAdmin(principal, userId)
      return orders.getCustomerOrder(userId, orderId, principal)
    },
  )

  app.get(
    '/orders/:id',
    {
      onRequest,
      schema: {
        tags,
        summary:
          "An order's full details and its links (self; cancel while it can be cancelled; payment and shipment once known)",
        description:
          "Another customer's order answers 404, as an unknown one does: its existence is not told.",
        security: security.requires('orders:read'),
        params: OrderIdParams,
        response: { 200: Order, ...errorResponses(401, 404) },
      },
    },
    async (request) => orders.getOrder(request.params.id, authenticatedPrincipal(request)),
  )

  app.post(
    '/orders/:id/cancel',
    {
      onRequest,
      schema: {
        tags,
        summary:
          'Cancel an order: 202, it is cancelling (compensations run asynchronously); 409 once its shipment step has begun (reserved, shipped, delivered) or it is cancelled or failed',
        security: security.requires('orders:write'),
        params: OrderIdParams,
        response: { 202: CancelledOrder, ...errorResponses(401, 404, 409) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await orders.cancelOrder(request.params.id, authenticatedPrincipal(request))),
  )
}
