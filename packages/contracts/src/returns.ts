// Returns (POST /api/v1/orders/{orderId}/returns): a customer sends lines of a shipped or delivered order back; an
// admin (or a carrier with its key) marks the goods received, the stock goes back to inventory and exactly the
// returned lines are refunded at the provider; or an admin rejects the return before receipt.
import { type Static, Type } from 'typebox'
import { Money } from './money.ts'
import { OrderLinks } from './orders.ts'
import { pageParameters, QueryObject } from './pagination.ts'
import { StringEnum } from './schema-kinds.ts'
import { CarrierName } from './shipments.ts'

const Uuid = Type.String({ format: 'uuid', maxLength: 36 })
const Timestamp = Type.String({ format: 'date-time', maxLength: 64 })
const Reason = Type.String({ minLength: 1, maxLength: 500 })

/**
 * A return's status:
 * - `requested`: asked for; return.requested is out; waits for its goods (or a rejection)
 * - `received`: the goods came back; the stock goes back to inventory, then the returned lines are refunded
 * - `completed`: stock back and refund made; final
 * - `rejected`: refused before receipt; final (its lines may be returned again)
 */
export const returnStatuses = ['requested', 'received', 'completed', 'rejected'] as const
export type ReturnStatus = (typeof returnStatuses)[number]
export const ReturnStatus = StringEnum(returnStatuses)

export const ReturnItemRequest = Type.Object(
  { productId: Uuid, quantity: Type.Integer({ minimum: 1, maximum: 1000 }) },
  { additionalProperties: false },
)
export type ReturnItemRequest = Static<typeof ReturnItemRequest>

/**
 * POST /orders/{orderId}/returns: which lines, how many of each (each product once), why, and the carrier the goods
 * go back with (one the deployment names in RETURNS_CARRIER_KEYS): that carrier alone may report them received.
 */
export const RequestReturnBody = Type.Object(
  {
    items: Type.Array(ReturnItemRequest, { minItems: 1, maxItems: 100 }),
    reason: Reason,
    carrier: Type.Optional(CarrierName),
  },
  { additionalProperties: false },
)
export type RequestReturnBody = Static<typeof RequestReturnBody>

/** A returned line: the order's unit price, so the refund is exactly price × quantity. */
export const ReturnItem = Type.Object(
  { productId: Uuid, quantity: Type.Integer({ minimum: 1 }), price: Money, name: Type.String() },
  { additionalProperties: false },
)
export type ReturnItem = Static<typeof ReturnItem>

export const Return = Type.Object(
  {
    returnId: Uuid,
    orderId: Uuid,
    customerId: Uuid,
    status: ReturnStatus,
    items: Type.Array(ReturnItem),
    refundAmount: Type.Number({
      minimum: 0,
      description: 'the returned lines: sum of price × quantity, computed in integer cents',
    }),
    reason: Type.String(),
    rejectionReason: Type.Optional(Type.String()),
    paymentId: Type.Optional(Type.String({ description: 'the refunded payment, once refunded' })),
    carrier: Type.Optional(
      Type.String({
        description: 'the carrier the goods go back with: the only one whose key may receive them',
      }),
    ),
    receivedBy: Type.Optional(
      Type.String({
        description:
          'who reported the goods received: `carrier:<name>`, or `admin` (which admin or key is in the audit trail)',
      }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    _links: OrderLinks,
  },
  { additionalProperties: false },
)
export type Return = Static<typeof Return>

export const ReturnParams = Type.Object({ returnId: Uuid })
export type ReturnParams = Static<typeof ReturnParams>

/** GET /orders/{orderId}/returns: the order's returns, newest first. */
export const ReturnListQuery = QueryObject({ ...pageParameters }, { additionalProperties: false })
export type ReturnListQuery = Static<typeof ReturnListQuery>

/** POST /returns/{returnId}/reject: why (told to the customer). */
export const RejectReturnBody = Type.Object({ reason: Reason }, { additionalProperties: false })
export type RejectReturnBody = Static<typeof RejectReturnBody>
