// The shipment resource of the shipping service: one shipment per reserved order, read in its hypermedia form
// (`_links`), listed with the pagination envelope, and delivered by an admin or a carrier.
import { type Static, Type } from 'typebox'
import { OrderLink, ShippingAddress } from './orders.ts'
import { pageParameters, QueryObject, sortParameter } from './pagination.ts'
import { StringEnum } from './schema-kinds.ts'

/**
 * A shipment's status:
 * - `created`: the order's stock was reserved and the shipment handed to the carrier (shipment.created is out)
 * - `delivered`: the carrier (or an admin) reported it delivered (shipment.delivered is out); final
 */
export const shipmentStatuses = ['created', 'delivered'] as const
export type ShipmentStatus = (typeof shipmentStatuses)[number]
export const ShipmentStatus = StringEnum(shipmentStatuses, { description: 'created, then delivered' })

/** The header a carrier sends its API key in, to report a delivery (lower case, as Node reads headers). */
export const carrierKeyHeader = 'x-carrier-key'
/** The longest carrier key: an opaque token's bound (the keys' variable refuses a longer one at start). */
export const carrierKeyMaxLength = 4096

const Uuid = Type.String({ format: 'uuid', maxLength: 36 })

export const ShipmentItem = Type.Object(
  { productId: Uuid, quantity: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
)
export type ShipmentItem = Static<typeof ShipmentItem>

/** `self` and `order` always, `deliver` while the shipment is `created`; each a hypermedia link {href, method}. */
export const ShipmentLinks = Type.Object(
  { self: OrderLink, order: OrderLink, deliver: Type.Optional(OrderLink) },
  { additionalProperties: false },
)
export type ShipmentLinks = Static<typeof ShipmentLinks>

export const Shipment = Type.Object(
  {
    id: Uuid,
    orderId: Uuid,
    customerId: Type.Optional(
      Type.String({
        format: 'uuid',
        maxLength: 36,
        description: "the order's customer; absent when the event did not say",
      }),
    ),
    status: ShipmentStatus,
    carrier: Type.String({ description: 'the carrier carrying it, e.g. meridian-post' }),
    trackingNumber: Type.String({ description: "the carrier's tracking number, unique" }),
    shippingAddress: Type.Optional(ShippingAddress),
    items: Type.Array(ShipmentItem),
    createdAt: Type.String({ format: 'date-time', maxLength: 64 }),
    deliveredAt: Type.Optional(
      Type.String({ format: 'date-time', maxLength: 64, description: 'once delivered' }),
    ),
    _links: ShipmentLinks,
  },
  { additionalProperties: false },
)
export type Shipment = Static<typeof Shipment>

/** The answer to POST /shipments/{shipmentId}/deliver: the shipment, delivered (the same on a repeated delivery). */
export const DeliveredShipment = Type.Object(
  {
    ...Shipment.properties,
    status: Type.Literal('delivered'),
    deliveredAt: Type.String({ format: 'date-time', maxLength: 64 }),
  },
  { additionalProperties: false },
)
export type DeliveredShipment = Static<typeof DeliveredShipment>

/** Fields a list may sort on (`sort=field:asc|desc`). */
export const shipmentSortFields = ['createdAt', 'deliveredAt'] as const

/**
 * GET /shipments: page, limit, sort, and the orderId and status filters. A non-admin sees only their own shipments
 * whatever the filters say.
 */
export const ShipmentListQuery = QueryObject(
  {
    ...pageParameters,
    sort: sortParameter(shipmentSortFields, {
      description: `field:asc or field:desc, comma-separated, e.g. createdAt:desc; fields: ${shipmentSortFields.join(', ')}`,
    }),
    orderId: Type.Optional(Uuid),
    status: Type.Optional(ShipmentStatus),
  },
  { additionalProperties: false },
)
export type ShipmentListQuery = Static<typeof ShipmentListQuery>

export const ShipmentIdParams = Type.Object({ shipmentId: Uuid })
export type ShipmentIdParams = Static<typeof ShipmentIdParams>

/** A carrier's name as a deployment configures it (`name=key` in RETURNS_CARRIER_KEYS): what a return is bound to. */
export const carrierNamePattern = '^[a-z0-9][a-z0-9-]{0,39}$'
export const CarrierName = Type.String({
  pattern: carrierNamePattern,
  maxLength: 40,
  description:
    "a carrier's name (lower-case letters, digits and dashes, up to 40), as the deployment configures it",
})

/** The carrier's credential on POST /shipments/{shipmentId}/deliver (instead of an admin's). */
export const CarrierKeyHeader = Type.Object({
  [carrierKeyHeader]: Type.Optional(
    Type.String({
      maxLength: carrierKeyMaxLength,
      description:
        "a carrier's API key (SHIPPING_CARRIER_KEYS): lets the carrier report deliveries; a wrong one is 401",
    }),
  ),
})
