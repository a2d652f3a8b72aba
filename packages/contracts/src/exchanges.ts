// Exchanges (POST /api/v1/orders/{orderId}/exchanges): a customer sends lines of a shipped or delivered order back for
// other products. The replacements are reserved first (no stock: nothing is charged), a price rise is charged, the
// returned goods are received (an admin says so), their stock goes back, a price fall is refunded on the order, and
// the replacements are shipped; a step that fails undoes what was done before it, in reverse order.
import { type Static, Type } from 'typebox'
import { Money } from './money.ts'
import { OrderLinks } from './orders.ts'
import { PaymentMethodId } from './payments.ts'
import { StringEnum } from './schema-kinds.ts'

const Uuid = Type.String({ format: 'uuid', maxLength: 36 })
const Timestamp = Type.String({ format: 'date-time', maxLength: 64 })

/**
 * An exchange's status:
 * - `requested`: asked for; the replacements are being reserved and any price rise charged
 * - `awaiting_goods`: the replacements are held (and the rise charged): waits for the returned goods
 * - `received`: the goods came back: their stock goes back, a price fall is refunded, the replacements ship
 * - `completed`: the replacements shipped; final
 * - `failed`: a step failed (no stock, a declined charge) or an operator cancelled it before receipt; what was done is
 *   undone (the held stock released, the charge refunded); final
 */
export const exchangeStatuses = ['requested', 'awaiting_goods', 'received', 'completed', 'failed'] as const
export type ExchangeStatus = (typeof exchangeStatuses)[number]
export const ExchangeStatus = StringEnum(exchangeStatuses)

export const ExchangeItemRequest = Type.Object(
  {
    productId: Uuid,
    quantity: Type.Integer({ minimum: 1, maximum: 1000 }),
    replacementProductId: Uuid,
  },
  { additionalProperties: false },
)
export type ExchangeItemRequest = Static<typeof ExchangeItemRequest>

/**
 * POST /orders/{orderId}/exchanges: which lines go back (each product once, at most what was ordered and is not
 * returned or exchanged yet) and what replaces each (an active product of the catalogue, at its current price). A
 * price rise is charged with `paymentToken`, or with the order's own payment method when it is absent.
 */
export const RequestExchangeBody = Type.Object(
  {
    items: Type.Array(ExchangeItemRequest, { minItems: 1, maxItems: 50 }),
    paymentToken: Type.Optional(
      PaymentMethodId({
        maxLength: 200,
        description: "the payment method that pays a price rise (pm_…, or tok_…); default: the order's own",
      }),
    ),
  },
  { additionalProperties: false },
)
export type RequestExchangeBody = Static<typeof RequestExchangeBody>

/** An exchanged line: the order's unit price of what goes back, the catalogue's of its replacement. */
export const ExchangeItem = Type.Object(
  {
    productId: Uuid,
    quantity: Type.Integer({ minimum: 1 }),
    price: Money,
    name: Type.String(),
    replacementProductId: Uuid,
    replacementPrice: Money,
    replacementName: Type.String(),
  },
  { additionalProperties: false },
)
export type ExchangeItem = Static<typeof ExchangeItem>

export const Exchange = Type.Object(
  {
    exchangeId: Uuid,
    orderId: Uuid,
    customerId: Uuid,
    status: ExchangeStatus,
    items: Type.Array(ExchangeItem),
    charge: Type.Number({
      minimum: 0,
      description:
        'the price rise charged: the replacements minus the returned lines, when positive (in cents)',
    }),
    refund: Type.Number({
      minimum: 0,
      description:
        'the price fall refunded on the order: the returned lines minus the replacements, when positive',
    }),
    failureReason: Type.Optional(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    _links: OrderLinks,
  },
  { additionalProperties: false },
)
export type Exchange = Static<typeof Exchange>

export const ExchangeParams = Type.Object({ exchangeId: Uuid })
export type ExchangeParams = Static<typeof ExchangeParams>
