// Orders: placing one (POST /orders, POST /users/{userId}/orders), reading one in its hypermedia form, a user's
// list, and cancelling. Registered at the root (the spec's paths) and under /api/v1 and /api (registerVersionedApi).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CancelledOrder,
  CustomerOrderParams,
  idempotencyKeyHeader,
  OptionalIdempotencyKeyHeader,
  Order,
  OrderCustomerParams,
  OrderIdParams,
  Paginated,
  PlacedOrder,
  PlaceOrderBody,
  PlaceUserOrderBody,
  replayedHeader,
  UserOrderListQuery,
} from '@meridian/contracts'
import {
  authenticatedPrincipal,
  errorResponses,
  idempotencyKeyChecked,
  idempotencyKeyOf,
  security,
} from '@meridian/service-kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { orderHref } from '../../domain/order-links.ts'
import type { OrderUseCases, PlaceAnswer, PlaceRequest } from '../../domain/orders.ts'
import type { OrdersGuards } from './access.ts'

export interface OrdersRoutesOptions {
  orders: OrderUseCases
  guards?: OrdersGuards
}

const IdempotencyKeyHeader = OptionalIdempotencyKeyHeader(
  "optional, 1 to 255 printable ASCII characters, the customer's own: the first request with it places the order; " +
    'the same key and body again (a retry after a timeout or a lost answer) answer 201 with that same order ' +
    '(Idempotent-Replayed: true) and place nothing; another body 422. Kept with the order for as long as it is kept.',
)

/** The request id and the Idempotency-Key of a request placing an order (the key checked in preValidation). */
const placeRequest = (request: FastifyRequest): PlaceRequest => {
  const idempotencyKey = idempotencyKeyOf(request.headers[idempotencyKeyHeader])
  return { requestId: request.id, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) }
}

export const ordersRoutes: FastifyPluginAsyncTypebox<OrdersRoutesOptions> = async (
  app,
  { orders, guards = {} },
) => {
  const tags = ['orders']
  const onRequest = guards.authenticated ?? []

  /** 201 with the placed order and its Location; a replay of an earlier request's says so. */
  const created = (reply: FastifyReply, { placed, replayed }: PlaceAnswer) => {
    if (replayed) reply.header(replayedHeader, 'true')
    return reply.code(201).header('location', orderHref(placed.orderId)).send(placed)
  }

  app.post(
    '/orders',
    {
      onRequest,
      preValidation: idempotencyKeyChecked,
      schema: {
        tags,
        summary:
          'Place an order (the customer, or an admin for anyone): priced from the catalogue, 201 with Location',
        security: security.requires('orders:write'),
        headers: IdempotencyKeyHeader,
        body: PlaceOrderBody,
        response: { 201: PlacedOrder, ...errorResponses(400, 401, 403, 422, 502, 503) },
      },
    },
    async (request, reply) =>
      created(
        reply,
        await orders.placeOrder(request.body, authenticatedPrincipal(request), placeRequest(request)),
      ),
  )

  app.post(
    '/users/:userId/orders',
    {
      onRequest,
      preValidation: idempotencyKeyChecked,
      schema: {
        tags,
        summary: "Place an order for the user (customerId, when sent, must be the path's userId)",
        security: security.requires('orders:write'),
        params: OrderCustomerParams,
        headers: IdempotencyKeyHeader,
        body: PlaceUserOrderBody,
        response: { 201: PlacedOrder, ...errorResponses(400, 401, 403, 422, 502, 503) },
      },
    },
    async (request, reply) =>
      created(
        reply,
        await orders.placeUserOrder(
          request.params.userId,
          request.body,
          authenticatedPrincipal(request),
          placeRequest(request),
        ),
      ),
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
    async (request) =>
      orders.listCustomerOrders(
        request.params.userId,
        request.query,
        request.url.split('?')[0] ?? request.url,
        authenticatedPrincipal(request),
      ),
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
    async (request) =>
      orders.getCustomerOrder(request.params.userId, request.params.orderId, authenticatedPrincipal(request)),
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
