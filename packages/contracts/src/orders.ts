// The order resource of the order service: what clients send to place an order, the order they read back in its
// hypermedia form (`_links`), the statuses the order saga moves it through, and the query of a user's order list.
import { type Static, Type } from 'typebox'
import { Money, maximumMoney } from './money.ts'
import { pageParameters, QueryObject, sortParameter } from './pagination.ts'
import { PaymentMethodId } from './payments.ts'
import { StringEnum, Text } from './schema-kinds.ts'

/**
 * An order's status. Placing an order makes it `placed`; the order saga (issue 14) moves it on:
 * - `placed`: accepted and priced from the catalogue; order.placed is in the outbox, payment not yet attempted
 * - `payment_action_required`: the card asks the customer to authenticate the charge (3-D Secure): `_links.authenticate`
 *   is the provider's page; the confirmation moves it to `paid`, a refusal or no answer before the payment service's
 *   deadline to `payment_failed`
 * - `payment_failed`: payment.failed came back for it; nothing was charged or reserved; the customer may pay it
 *   (POST /payments with the amount due), and the saga goes on to `paid`
 * - `paid`: payment.processed came back; stock is not yet reserved
 * - `reserved`: inventory reserved its items and the shipment step has begun (shipment.requested): it can no longer
 *   be cancelled
 * - `shipped`: a shipment was created
 * - `delivered`: the shipment arrived; final
 * - `cancelling`: the customer (or an admin) cancelled it; order.cancelled is out, compensations (refund, release)
 *   are under way
 * - `cancelled`: every compensation finished; final
 * - `failed`: a saga step failed and its compensations ran; final
 */
export const orderStatuses = [
  'placed',
  'payment_action_required',
  'payment_failed',
  'paid',
  'reserved',
  'shipped',
  'delivered',
  'cancelling',
  'cancelled',
  'failed',
] as const
export type OrderStatus = (typeof orderStatuses)[number]
export const OrderStatus = StringEnum(orderStatuses, { description: 'see States and transitions' })

/**
 * The statuses a cancel request moves to `cancelling`: the shipment step has not begun. `payment_failed` is among
 * them: the customer may abandon an order whose payment failed (there is nothing to compensate). `reserved` is not:
 * the saga asked shipping for the shipment in the transaction that made the order `reserved`, so a refund then could
 * go with a shipment.
 */
export const cancellableOrderStatuses: readonly OrderStatus[] = [
  'placed',
  'payment_action_required',
  'payment_failed',
  'paid',
]

const Uuid = Type.String({ format: 'uuid', maxLength: 36 })
const AddressLine = Text({ minLength: 1, maxLength: 200 })

export const ShippingAddress = Type.Object(
  { street: AddressLine, city: AddressLine, zip: AddressLine },
  { additionalProperties: false },
)
export type ShippingAddress = Static<typeof ShippingAddress>

const Quantity = Type.Integer({ minimum: 1, maximum: 1000 })

export const PlaceOrderItem = Type.Object(
  {
    productId: Uuid,
    quantity: Quantity,
    price: Type.Number({
      minimum: 0,
      maximum: maximumMoney,
      description: 'the unit price the client saw: must equal the catalogue price (at most two decimals)',
    }),
  },
  { additionalProperties: false },
)
export type PlaceOrderItem = Static<typeof PlaceOrderItem>

/** POST /api/v1/orders (customerId required) and POST /users/{userId}/orders (customerId optional, = userId). */
export const PlaceOrderBody = Type.Object(
  {
    customerId: Uuid,
    items: Type.Array(PlaceOrderItem, { minItems: 1, maxItems: 100 }),
    shippingAddress: ShippingAddress,
    payment: Type.Optional(
      Type.Object(
        {
          token: PaymentMethodId({
            maxLength: 200,
            description:
              "the payment method the provider made in the customer's browser (pm_…, or tok_…); never card data",
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)
export type PlaceOrderBody = Static<typeof PlaceOrderBody>

/** The body of POST /users/{userId}/orders: the same, customerId optional (it must equal userId when present). */
export const PlaceUserOrderBody = Type.Object(
  { ...PlaceOrderBody.properties, customerId: Type.Optional(Uuid) },
  { additionalProperties: false },
)
export type PlaceUserOrderBody = Static<typeof PlaceUserOrderBody>

/** A hypermedia link: where, and with which method. */
export const OrderLink = Type.Object(
  { href: Type.String(), method: Type.String() },
  { additionalProperties: false },
)
export type OrderLink = Static<typeof OrderLink>

/** Link name -> link: `self` always, `cancel` while the order can be cancelled (and the resource's own links). */
export const OrderLinks = Type.Record(Type.String(), OrderLink)
export type OrderLinks = Static<typeof OrderLinks>

/** A link of one name, described: the same shape as OrderLink. */
const NamedLink = (description: string) =>
  Type.Object({ href: Type.String(), method: Type.String() }, { additionalProperties: false, description })

/** The links of an order as GET /orders/{id} and the user-scoped order routes answer it. */
export const OrderResourceLinks = Type.Object(
  {
    self: NamedLink('GET: the order'),
    cancel: Type.Optional(
      NamedLink(
        'POST: while the order can be cancelled (placed, payment_action_required, payment_failed, paid)',
      ),
    ),
    authenticate: Type.Optional(
      NamedLink(
        "GET, in the customer's browser: the payment provider's 3-D Secure page, while the order is payment_action_required",
      ),
    ),
    payment: Type.Optional(
      NamedLink(
        'GET /api/v1/payments/{paymentId}: the payment of the order, once payment.processed named it',
      ),
    ),
    shipment: Type.Optional(
      NamedLink(
        'GET /api/v1/shipments/{shipmentId}: the shipment of the order, once shipment.created named it',
      ),
    ),
    returns: Type.Optional(
      NamedLink(
        'POST: return lines of the order, once it shipped (shipped, delivered); GET lists its returns',
      ),
    ),
    exchanges: Type.Optional(
      NamedLink(
        'POST: exchange lines of the order for other products, once it shipped (shipped, delivered); GET lists its exchanges',
      ),
    ),
  },
  { additionalProperties: false },
)
export type OrderResourceLinks = Static<typeof OrderResourceLinks>

export const OrderItem = Type.Object(
  { productId: Uuid, quantity: Quantity, price: Money, name: Type.String() },
  { additionalProperties: false },
)
export type OrderItem = Static<typeof OrderItem>

export const Order = Type.Object(
  {
    id: Uuid,
    customerId: Uuid,
    status: OrderStatus,
    total: Type.Number({
      minimum: 0,
      description: 'sum of price * quantity, computed by the server in integer cents',
    }),
    items: Type.Array(OrderItem),
    shippingAddress: ShippingAddress,
    createdAt: Type.String({ format: 'date-time', maxLength: 64 }),
    updatedAt: Type.String({ format: 'date-time', maxLength: 64 }),
    _links: OrderResourceLinks,
  },
  { additionalProperties: false },
)
export type Order = Static<typeof Order>

/** The answer to placing an order (201). */
export const PlacedOrder = Type.Object(
  {
    orderId: Uuid,
    status: OrderStatus,
    total: Money,
    _links: Type.Optional(OrderLinks),
  },
  { additionalProperties: false },
)
export type PlacedOrder = Static<typeof PlacedOrder>

/** The answer to a cancel request (202): the order is `cancelling`, its compensations run asynchronously. */
export const CancelledOrder = Type.Object(
  { orderId: Uuid, status: OrderStatus, _links: OrderLinks },
  { additionalProperties: false },
)
export type CancelledOrder = Static<typeof CancelledOrder>

export const orderSortFields = ['createdAt', 'total'] as const

/** GET /users/{userId}/orders: page, limit, sort (createdAt or total), and a status filter. */
export const UserOrderListQuery = QueryObject(
  {
    ...pageParameters,
    sort: sortParameter(orderSortFields, {
      description: `field:asc or field:desc, comma-separated, e.g. createdAt:desc; fields: ${orderSortFields.join(', ')}`,
    }),
    status: Type.Optional(OrderStatus),
  },
  { additionalProperties: false },
)
export type UserOrderListQuery = Static<typeof UserOrderListQuery>

export const OrderIdParams = Type.Object({ id: Uuid })
export type OrderIdParams = Static<typeof OrderIdParams>

export const OrderCustomerParams = Type.Object({ userId: Uuid })
export type OrderCustomerParams = Static<typeof OrderCustomerParams>

export const CustomerOrderParams = Type.Object({ userId: Uuid, orderId: Uuid })
export type CustomerOrderParams = Static<typeof CustomerOrderParams>
