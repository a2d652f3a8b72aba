// The domain event envelope (spec: Domain event envelope) and the data schema of each event type with its version.
// The format strings a released event holds (envelope and data) have no maxLength: a bound would narrow what events
// already in Kafka may hold, which the compatibility check refuses (docs/reference/domain-events.md, a new type would be needed);
// a field or type added since the release has one (service-kit's linear-validation test holds both).
import { type Static, type TSchema, Type } from 'typebox'

export const EventEnvelopeBase = Type.Object({
  id: Type.String({ minLength: 1, description: 'unique, sortable event id' }),
  type: Type.String({
    pattern: '^[a-z]+(\\.[a-z_0-9]+)+$',
    description: 'dotted past-tense name, e.g. order.placed',
  }),
  source: Type.String({ minLength: 1, description: 'producing service' }),
  schemaVersion: Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+$' }),
  timestamp: Type.String({ format: 'date-time' }),
  data: Type.Record(Type.String(), Type.Unknown()),
})
export type EventEnvelopeBase = Static<typeof EventEnvelopeBase>

/** The envelope of one event type, its data checked against that type's schema. */
export const EventEnvelope = <Name extends string, Data extends TSchema>(type: Name, data: Data) =>
  Type.Object({
    id: EventEnvelopeBase.properties.id,
    type: Type.Literal(type),
    source: EventEnvelopeBase.properties.source,
    schemaVersion: EventEnvelopeBase.properties.schemaVersion,
    timestamp: EventEnvelopeBase.properties.timestamp,
    data,
  })

const Id = Type.String({ minLength: 1, maxLength: 255 })
const Money = Type.Number({ minimum: 0 })
const OrderItem = Type.Object({
  productId: Id,
  quantity: Type.Integer({ minimum: 1 }),
  price: Money,
  name: Type.Optional(Type.String()),
})
const Address = Type.Object({ street: Type.String(), city: Type.String(), zip: Type.String() })

/**
 * user.registered — auth, when a user is created (never carries the password). A new user is at version 1; `status`
 * (1.1.0) is absent from older events, which were all `active`.
 */
export const UserRegisteredData = Type.Object({
  userId: Type.String({ format: 'uuid' }),
  email: Type.String({ format: 'email' }),
  name: Type.String(),
  role: Type.String(),
  status: Type.Optional(Type.String()),
})
export type UserRegisteredData = Static<typeof UserRegisteredData>
export const UserRegistered = EventEnvelope('user.registered', UserRegisteredData)
export type UserRegistered = Static<typeof UserRegistered>

/**
 * user.profile_changed — auth, when a user's name, email, role or status changed (PATCH, an admin's promotion, an
 * invited user's first password): the user's whole state after the change. `version` grows by one or more with every
 * change of the user, so a consumer keeps the highest it has seen and skips older ones (retries reorder events).
 */
export const UserProfileChangedData = Type.Object({
  userId: Type.String({ format: 'uuid' }),
  email: Type.String({ format: 'email' }),
  name: Type.String(),
  role: Type.String(),
  status: Type.String(),
  version: Type.Integer({ minimum: 1 }),
})
export type UserProfileChangedData = Static<typeof UserProfileChangedData>

/** user.removed — auth, when a user was removed (DELETE /users/{id}): final; no event of that user follows. */
export const UserRemovedData = Type.Object({ userId: Type.String({ format: 'uuid' }) })
export type UserRemovedData = Static<typeof UserRemovedData>

/** order.placed — order, on POST /api/orders; the full-state variant adds customerEmail, status, shippingAddress. */
export const OrderPlacedData = Type.Object({
  orderId: Id,
  customerId: Id,
  total: Money,
  items: Type.Array(OrderItem, { minItems: 1 }),
  customerEmail: Type.Optional(Type.String({ format: 'email' })),
  status: Type.Optional(Type.String()),
  shippingAddress: Type.Optional(Address),
  /** how the payment step charges: a provider token (cards are tokenized at the provider; no card data here) */
  payment: Type.Optional(Type.Object({ token: Type.String({ minLength: 1, maxLength: 255 }) })),
})
export type OrderPlacedData = Static<typeof OrderPlacedData>

/** payment.processed — the order.placed content plus paymentId. */
export const PaymentProcessedData = Type.Object({ ...OrderPlacedData.properties, paymentId: Id })
export const PaymentFailedData = Type.Object({ orderId: Id, reason: Type.String() })
/**
 * payment.action_required — the order's card asks the customer to authenticate the charge (3-D Secure) before it is
 * made: `authenticateUrl` is the provider's page for the customer's browser (absent when the provider gave none), and
 * the payment service waits until `expiresAt`; then payment.processed (confirmed) or payment.failed (refused, or no
 * answer in time: the provider's payment is cancelled) follows. Sent again with the same content while it waits
 * when the saga asks again (payment.requested).
 */
export const PaymentActionRequiredData = Type.Object({
  orderId: Id,
  authenticateUrl: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2000 })),
  expiresAt: Type.String({ format: 'date-time', maxLength: 64 }),
})
/**
 * Why a refund is made (1.1.0 of payment.refund_requested, 1.2.0 of payment.refunded): `compensation` (the order saga
 * undoes a failed or cancelled order: the whole order; absent in older events) or `return` (a return's returned lines:
 * the amount asked, under the return's own key). The order saga reads only compensations' refunds.
 */
export const refundCauses = ['compensation', 'return'] as const
/**
 * The key a refund of an amount is made under, once (payment.refund_requested 1.2.0): the asking process's own,
 * its type first (a return's is `return-<returnId>`). Payment sends the provider `refund-<key>` (with `-<n>` after n
 * declines); a compensation's provider keys are `refund-<orderId>[-<paymentId>]`, so a key that is an order's id
 * would reuse one with other parameters, which the provider refuses (nothing is refunded twice).
 */
export const RefundKey = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
})
export type RefundCause = (typeof refundCauses)[number]
// written out: a union of a mapped array has the Static never (no cause would type-check)
const RefundCause = Type.Union([Type.Literal('compensation'), Type.Literal('return')], {
  description: 'why the refund is made; absent: compensation',
})
/**
 * payment.refunded — the answer to a refund (payment.refund_requested): each refunded payment, or, when the order had
 * no succeeded payment, one event without paymentId and with amount 0 (nothing was charged). A return's refund names
 * its `returnId` and `cause: return`.
 */
export const PaymentRefundedData = Type.Object({
  orderId: Id,
  paymentId: Type.Optional(Id),
  amount: Money,
  reason: Type.Optional(Type.String()),
  cause: Type.Optional(RefundCause),
  returnId: Type.Optional(Id),
  /** 1.3.0: the refund's key, as its request named it (payment.refund_requested 1.2.0) */
  refundKey: Type.Optional(RefundKey),
})
/**
 * Why a refund was made, as payment.refunded.v2 says it: a compensation, a return, or `provider` — a refund made at
 * the provider outside Meridian (from its dashboard, or one of Meridian's whose answer was lost), which payment learns
 * of from the provider's charge.refunded. A new value of payment.refunded's own `cause` would be a breaking change
 * (its released consumers refuse a value their union does not hold, and an absent cause reads as a compensation), so
 * such a refund is a new type (docs/reference/domain-events.md, "Versioning").
 */
export const refundCausesV2 = ['compensation', 'return', 'provider'] as const
export type RefundCauseV2 = (typeof refundCausesV2)[number]
const RefundCauseV2 = Type.Union(
  [Type.Literal('compensation'), Type.Literal('return'), Type.Literal('provider')],
  { description: 'why the refund was made; provider: at the provider, outside Meridian' },
)
/**
 * payment.refunded.v2 — a refund with its cause always said, `provider` among the causes. Payment writes it for the
 * refunds made at the provider outside Meridian (cause `provider`): the part of the charge's refunded amount that
 * Meridian had not recorded, once per provider refund. Compensations and returns are still answered with
 * payment.refunded 1.x, which the order saga and the return process read; a refund at the provider is no answer to
 * either and is never on payment.refunded.
 */
export const PaymentRefundedV2Data = Type.Object({
  orderId: Id,
  paymentId: Id,
  /** what this refund added to the payment's refunded amount */
  amount: Money,
  /** the payment's whole refunded amount at the provider after it */
  refundedTotal: Money,
  cause: RefundCauseV2,
  reason: Type.Optional(Type.String({ maxLength: 500 })),
  returnId: Type.Optional(Id),
})
/**
 * payment.disputed — the customer's bank disputed the payment's charge (a chargeback, the provider's
 * charge.dispute.created): the payment is marked disputed; the money is held by the provider until the dispute is
 * decided.
 */
export const PaymentDisputedData = Type.Object({
  orderId: Id,
  paymentId: Id,
  /** the provider's dispute (dp_…) */
  disputeId: Id,
  /** what is disputed */
  amount: Money,
  /** the provider's reason: fraudulent, duplicate, product_not_received, … */
  reason: Type.String({ minLength: 1, maxLength: 100 }),
})
/**
 * payment.refund_failed — a return's refund the provider declined (the answer to payment.refund_requested with
 * `cause: return` when it cannot be made): the return's process retries it, then escalates it to operators.
 */
export const PaymentRefundFailedData = Type.Object({
  orderId: Id,
  returnId: Id,
  reason: Type.String(),
  cause: RefundCause,
  attempt: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
})
/**
 * payment.refund_failed.v2 — a refund of an amount (payment.refund_requested with its `refundKey`) that cannot be made:
 * the provider declined it, or the order's payments have not that much left. Nothing was refunded. 1.0 named a
 * return (`returnId`, `cause`, both required); a refund asked by any process is answered with this type instead.
 */
export const PaymentRefundFailedV2Data = Type.Object({
  orderId: Id,
  refundKey: RefundKey,
  reason: Type.String({ maxLength: 1000 }),
  attempt: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
})
const ReservedItem = Type.Object({ productId: Id, quantity: Type.Integer({ minimum: 1 }) })
/** inventory.reserved — with the customer and the address from payment.processed, for the shipment step. */
export const InventoryReservedData = Type.Object({
  orderId: Id,
  reservationId: Id,
  items: Type.Array(ReservedItem),
  customerId: Type.Optional(Id),
  shippingAddress: Type.Optional(Address),
})
export const InventoryFailedData = Type.Object({
  orderId: Id,
  reason: Type.String(),
  items: Type.Optional(Type.Array(ReservedItem)),
})
/**
 * inventory.released — the answer to the saga's release (inventory.release_requested): the reservation given back, or,
 * when the order held none, no reservationId (nothing was held).
 */
export const InventoryReleasedData = Type.Object({
  orderId: Id,
  reservationId: Type.Optional(Id),
  reason: Type.String(),
})
export const ShipmentCreatedData = Type.Object({
  orderId: Id,
  shipmentId: Id,
  carrier: Type.Optional(Type.String()),
  trackingNumber: Type.Optional(Type.String()),
})
export const ShipmentDeliveredData = Type.Object({
  orderId: Id,
  shipmentId: Id,
  deliveredAt: Type.String({ format: 'date-time' }),
})
/** Which attempt of a saga step a command is: 1 for the first request, n for the n-th retry plus one. */
const Attempt = Type.Integer({ minimum: 1, maximum: 1000 })
/**
 * The order saga's commands (its process manager, in order, asks again when a step times out, and runs the
 * compensations in reverse order): each names what is requested of whom, and the answer is the step's usual event.
 * payment.requested — charge the order again (answer payment.processed / payment.failed).
 */
export const PaymentRequestedData = Type.Object({ ...OrderPlacedData.properties, attempt: Attempt })
/** inventory.reservation_requested — reserve the paid order's stock again (inventory.reserved / inventory.failed). */
export const InventoryReservationRequestedData = Type.Object({
  ...PaymentProcessedData.properties,
  attempt: Attempt,
})
/** shipment.requested — create the reserved order's shipment again (shipment.created). */
export const ShipmentRequestedData = Type.Object({
  ...InventoryReservedData.properties,
  attempt: Attempt,
})
/** inventory.release_requested — compensation: give the order's held stock back (inventory.released). */
export const InventoryReleaseRequestedData = Type.Object({
  orderId: Id,
  reason: Type.String(),
  attempt: Attempt,
})
/**
 * payment.refund_requested — refund the order's payments: all of them (a compensation: payment.refunded for each), or,
 * with an `amount` and a `refundKey` (1.2.0), exactly that amount once under the key whatever the attempt (answered
 * with payment.refunded carrying the key, or payment.refund_failed.v2 when it cannot be made). 1.1.0 said a return's
 * refund with `cause: return` and its `returnId` (its key `return-<returnId>`); the order service still writes them
 * for payment services of releases before 1.2.0, and payment reads them only through refundAsked (event-readings.ts).
 */
export const PaymentRefundRequestedData = Type.Object({
  orderId: Id,
  reason: Type.String(),
  attempt: Attempt,
  cause: Type.Optional(RefundCause),
  returnId: Type.Optional(Id),
  amount: Type.Optional(Money),
  refundKey: Type.Optional(RefundKey),
})
const ReturnedItem = Type.Object({ productId: Id, quantity: Type.Integer({ minimum: 1 }) })
const PricedReturnedItem = Type.Object({
  ...ReturnedItem.properties,
  price: Money,
  name: Type.Optional(Type.String()),
})
/**
 * return.requested — order: a customer (or an admin) asked to return lines of a shipped or delivered order; the
 * `refundAmount` is exactly the returned lines (price × quantity, summed in integer cents).
 */
export const ReturnRequestedData = Type.Object({
  returnId: Id,
  orderId: Id,
  customerId: Id,
  items: Type.Array(PricedReturnedItem),
  refundAmount: Money,
  reason: Type.String(),
})
/** return.received — order: the goods came back (an admin or a carrier said so); the stock goes back next. */
export const ReturnReceivedData = Type.Object({
  returnId: Id,
  orderId: Id,
  customerId: Id,
  items: Type.Array(ReturnedItem),
})
/** return.completed — order: the stock is back and the returned lines are refunded. */
export const ReturnCompletedData = Type.Object({
  returnId: Id,
  orderId: Id,
  customerId: Id,
  refundAmount: Money,
  paymentId: Type.Optional(Id),
})
/** return.rejected — order: the return was refused before its goods were received. */
export const ReturnRejectedData = Type.Object({
  returnId: Id,
  orderId: Id,
  customerId: Id,
  reason: Type.String(),
})
/**
 * inventory.restock_requested — a return's process asks inventory to put its received lines back in stock, once per
 * return whatever the attempt (answer inventory.restocked).
 */
export const InventoryRestockRequestedData = Type.Object({
  returnId: Id,
  orderId: Id,
  items: Type.Array(ReturnedItem),
  attempt: Attempt,
})
/** inventory.restocked — the return's lines are back in stock (once per return; asked again, answered again). */
export const InventoryRestockedData = Type.Object({
  returnId: Id,
  orderId: Id,
  items: Type.Array(ReturnedItem),
})
/**
 * inventory.restock_requested.v2 — put lines back in stock, once per `restockId` whatever the attempt (answer
 * inventory.restocked.v2): the asking process names the restock (a return's is its returnId) and says why (the stock
 * movements' reason). 1.0 required a `returnId`; a restock asked by any process is this type.
 */
export const InventoryRestockRequestedV2Data = Type.Object({
  restockId: Id,
  orderId: Id,
  items: Type.Array(ReturnedItem, { maxItems: 1000 }),
  reason: Type.Optional(Type.String({ maxLength: 200 })),
  attempt: Attempt,
})
/** inventory.restocked.v2 — the restock's lines are back in stock (once per restockId; asked again, answered again). */
export const InventoryRestockedV2Data = Type.Object({
  restockId: Id,
  orderId: Id,
  items: Type.Array(ReturnedItem),
})
const ExchangedItem = Type.Object({
  ...PricedReturnedItem.properties,
  replacementProductId: Id,
  replacementPrice: Money,
  replacementName: Type.Optional(Type.String()),
})
/**
 * exchange.requested — order: a customer (or an admin) asked to exchange lines of a shipped or delivered order for
 * other products; `charge` is the price rise to be charged, `refund` the price fall to be refunded (one of them 0).
 */
export const ExchangeRequestedData = Type.Object({
  exchangeId: Id,
  orderId: Id,
  customerId: Id,
  items: Type.Array(ExchangedItem, { maxItems: 100 }),
  charge: Money,
  refund: Money,
})
/** exchange.awaiting_goods — order: the replacements are held (a rise charged): the returned lines may be sent. */
export const ExchangeAwaitingGoodsData = Type.Object({
  exchangeId: Id,
  orderId: Id,
  customerId: Id,
  items: Type.Array(ReturnedItem, { maxItems: 100 }),
})
/** exchange.completed — order: the goods came back, a fall was refunded, the replacements shipped. */
export const ExchangeCompletedData = Type.Object({
  exchangeId: Id,
  orderId: Id,
  customerId: Id,
  charge: Money,
  refund: Money,
  shipmentId: Type.Optional(Id),
})
/** exchange.failed — order: a step failed (or an operator cancelled it); what was done is being undone. */
export const ExchangeFailedData = Type.Object({
  exchangeId: Id,
  orderId: Id,
  customerId: Id,
  reason: Type.String({ maxLength: 1000 }),
  failedStep: Type.String({ maxLength: 64 }),
})
export const OrderCancelledData = Type.Object({ orderId: Id, reason: Type.String() })
export const OrderCompletedData = Type.Object({ orderId: Id })
export const OrderFailedData = Type.Object({ orderId: Id, reason: Type.String(), failedStep: Type.String() })
export const PostCreatedData = Type.Object({ postId: Id, authorId: Id, title: Type.String() })
export const NotificationCreatedData = Type.Object({
  notificationId: Id,
  userId: Id,
  type: Type.String(),
  title: Type.String(),
  message: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
})
/**
 * notification.email_requested — a notification's mail, to be sent (again). Only its dead letters are published: when
 * the notification service gives a mail up (dead), this event goes to `notification.email_requested.dlt` through its
 * outbox, with the last error in the dead letter's headers; an operator's replay puts it on this topic, and the
 * notification service makes that mail pending again (a mail already sent stays sent: it is never sent twice).
 */
export const NotificationEmailRequestedData = Type.Object({
  notificationId: Id,
  userId: Id,
  /** the notification's type (its mail's template) */
  type: Type.String({ maxLength: 64 }),
  /** sends tried before it was given up */
  attempts: Type.Integer({ minimum: 0 }),
})

/**
 * Every event type of the catalogue (docs/explanation/architecture.md, "The processes") with its current schema version and data schema. Producers and
 * consumers validate against these. A breaking change adds a `.v2` type here; the old entry stays.
 */
export const eventCatalogue = {
  'user.registered': { version: '1.1.0', data: UserRegisteredData },
  'user.profile_changed': { version: '1.0.0', data: UserProfileChangedData },
  'user.removed': { version: '1.0.0', data: UserRemovedData },
  'order.placed': { version: '1.0.0', data: OrderPlacedData },
  'payment.processed': { version: '1.0.0', data: PaymentProcessedData },
  'payment.failed': { version: '1.0.0', data: PaymentFailedData },
  'payment.action_required': { version: '1.0.0', data: PaymentActionRequiredData },
  'payment.refunded': { version: '1.3.0', data: PaymentRefundedData },
  'payment.refund_failed': { version: '1.0.0', data: PaymentRefundFailedData },
  'payment.refund_failed.v2': { version: '2.0.0', data: PaymentRefundFailedV2Data },
  'payment.refunded.v2': { version: '2.0.0', data: PaymentRefundedV2Data },
  'payment.disputed': { version: '1.0.0', data: PaymentDisputedData },
  'inventory.reserved': { version: '1.1.0', data: InventoryReservedData },
  'inventory.failed': { version: '1.0.0', data: InventoryFailedData },
  'inventory.released': { version: '1.1.0', data: InventoryReleasedData },
  'payment.requested': { version: '1.0.0', data: PaymentRequestedData },
  'inventory.reservation_requested': { version: '1.0.0', data: InventoryReservationRequestedData },
  'shipment.requested': { version: '1.0.0', data: ShipmentRequestedData },
  'inventory.release_requested': { version: '1.0.0', data: InventoryReleaseRequestedData },
  'payment.refund_requested': { version: '1.2.0', data: PaymentRefundRequestedData },
  'return.requested': { version: '1.0.0', data: ReturnRequestedData },
  'return.received': { version: '1.0.0', data: ReturnReceivedData },
  'return.completed': { version: '1.0.0', data: ReturnCompletedData },
  'return.rejected': { version: '1.0.0', data: ReturnRejectedData },
  'exchange.requested': { version: '1.0.0', data: ExchangeRequestedData },
  'exchange.awaiting_goods': { version: '1.0.0', data: ExchangeAwaitingGoodsData },
  'exchange.completed': { version: '1.0.0', data: ExchangeCompletedData },
  'exchange.failed': { version: '1.0.0', data: ExchangeFailedData },
  'inventory.restock_requested': { version: '1.0.0', data: InventoryRestockRequestedData },
  'inventory.restocked': { version: '1.0.0', data: InventoryRestockedData },
  'inventory.restock_requested.v2': { version: '2.0.0', data: InventoryRestockRequestedV2Data },
  'inventory.restocked.v2': { version: '2.0.0', data: InventoryRestockedV2Data },
  'shipment.created': { version: '1.0.0', data: ShipmentCreatedData },
  'shipment.delivered': { version: '1.0.0', data: ShipmentDeliveredData },
  'order.cancelled': { version: '1.0.0', data: OrderCancelledData },
  'order.completed': { version: '1.0.0', data: OrderCompletedData },
  'order.failed': { version: '1.0.0', data: OrderFailedData },
  'post.created': { version: '1.0.0', data: PostCreatedData },
  'notification.created': { version: '1.0.0', data: NotificationCreatedData },
  'notification.email_requested': { version: '1.0.0', data: NotificationEmailRequestedData },
} as const satisfies Record<string, { version: string; data: TSchema }>

export type EventType = keyof typeof eventCatalogue
export type EventData<T extends EventType> = Static<(typeof eventCatalogue)[T]['data']>
