// /api/v1/shipments: a shipment in its hypermedia form (the customer or an admin), the list (an admin's all, a
// customer's own), and the delivery report (an admin, or a carrier with its key).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CarrierKeyHeader,
  carrierKeyHeader,
  DeliveredShipment,
  Paginated,
  Shipment,
  ShipmentIdParams,
  ShipmentListQuery,
} from '@meridian/contracts'
import { auditSourceOf, authenticatedPrincipal, errorResponses, security } from '@meridian/service-kit'
import type { onRequestHookHandler } from 'fastify'
import { carrierActorOf } from '../../domain/access.ts'
import type { ShipmentUseCases } from '../../domain/shipments.ts'

/** Who may call (see access.ts); without guards every route is open (and reads answer 401 for want of a principal). */
export interface ShipmentsGuards {
  /** onRequest of the reads: a credential is required */
  read?: onRequestHookHandler[]
  /** onRequest of POST /shipments/:shipmentId/deliver: an admin, or a carrier's key */
  deliver?: onRequestHookHandler[]
}

export type ShipmentsRoutesOptions = {
  shipments: ShipmentUseCases
  guards?: ShipmentsGuards
}

export const shipmentsRoutes: FastifyPluginAsyncTypebox<ShipmentsRoutesOptions> = async (
  app,
  { shipments, guards = {} },
) => {
  const tags = ['shipments']

  app.get(
    '/shipments',
    {
      onRequest: guards.read ?? [],
      schema: {
        tags,
        summary:
          "List shipments (an admin's: all; anyone else's: their own): page, limit, sort, orderId and status",
        security: security.requires('shipments:read'),
        querystring: ShipmentListQuery,
        response: { 200: Paginated(Shipment), ...errorResponses(401, 422) },
      },
    },
    async (request) =>
      shipments.listShipments(
        request.query,
        authenticatedPrincipal(request),
        request.url.split('?')[0] ?? request.url,
      ),
  )

  app.get(
    '/shipments/:shipmentId',
    {
      onRequest: guards.read ?? [],
      schema: {
        tags,
        summary:
          "A shipment with its links (self, order; deliver while on its way): the order's customer or an admin",
        description:
          "Another customer's shipment answers 404, as an unknown one does: its existence is not told.",
        security: security.requires('shipments:read'),
        params: ShipmentIdParams,
        response: { 200: Shipment, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => shipments.getShipment(request.params.shipmentId, authenticatedPrincipal(request)),
  )

  app.post(
    '/shipments/:shipmentId/deliver',
    {
      onRequest: guards.deliver ?? [],
      schema: {
        tags,
        summary:
          'Report the shipment delivered (an admin, or a carrier with X-Carrier-Key): shipment.delivered is published; again, the same answer and no second event',
        description:
          'A carrier sends its key in X-Carrier-Key (a wrong key is 401); without it, an admin credential is needed (a user who is not an admin, the customer too, is 403).',
        security: security.requires('shipments:write'),
        params: ShipmentIdParams,
        headers: CarrierKeyHeader,
        response: { 200: DeliveredShipment, ...errorResponses(401, 403, 404, 422) },
      },
    },
    async (request) => {
      const key = request.headers[carrierKeyHeader]
      const actor = key === undefined ? authenticatedPrincipal(request) : carrierActorOf(String(key))
      return shipments.deliverShipment(request.params.shipmentId, auditSourceOf(request, actor))
    },
  )
}
