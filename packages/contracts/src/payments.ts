// The payment resource of the payment service: what a payer sends to POST /payments (with an Idempotency-Key header)
// and receives, and the payment method an order.placed event may carry for the payment step. A payment is paid with a
// payment method the provider made in the customer's browser (pm_…): a card number reaches Meridian only in
// development and test (source.card, the simulator's test cards); production refuses one (docs/explanation/security.md, "PCI
// scope").
import { type Static, Type } from 'typebox'
import { Money, maximumMoney } from './money.ts'

/**
 * Card details, passed straight to the provider's tokenization: never stored, logged or echoed back. Development and
 * test only: a service in production refuses them (422 naming the field) before anything else happens.
 */
export const CardDetails = Type.Object(
  {
    number: Type.String({
      minLength: 12,
      maxLength: 23,
      pattern: '^[0-9][0-9 -]*[0-9]$',
      description: 'the card number (spaces and dashes ignored); only its brand and last four are kept',
    }),
    expMonth: Type.Integer({ minimum: 1, maximum: 12 }),
    expYear: Type.Integer({ minimum: 2000, maximum: 2100, description: 'four digits' }),
    cvc: Type.String({ pattern: '^[0-9]{3,4}$', maxLength: 4 }),
  },
  { additionalProperties: false },
)
export type CardDetails = Static<typeof CardDetails>

/** A token the provider issued for a card (e.g. tok_…). */
export const PaymentToken = Type.String({
  minLength: 1,
  maxLength: 255,
  description: "the provider's card token",
})

/**
 * The id of a payment method the provider made: Stripe's `pm_…` (its test ones too, e.g. `pm_card_visa`), or a card
 * token `tok_…` where the provider takes one as a payment method. Made where the card is typed, by the provider's own elements
 * in the customer's browser: only its id reaches Meridian. Anything else, a card number above all, is refused.
 */
export const paymentMethodIdPattern = '^(pm|tok)_[0-9A-Za-z_]+$'

export const PaymentMethodId = (options: { maxLength: number; description: string }) =>
  Type.String({ minLength: 4, pattern: paymentMethodIdPattern, ...options })

export const TokenSource = Type.Object(
  {
    token: PaymentMethodId({
      maxLength: 255,
      description:
        "the provider's payment method (pm_…, or tok_…) that pays: made in the customer's browser by the provider's " +
        'own elements (Stripe Elements or Checkout), never from a card sent to Meridian',
    }),
  },
  { additionalProperties: false },
)
export const CardSource = Type.Object(
  { card: CardDetails },
  {
    additionalProperties: false,
    description:
      "development and test only (the simulator's test cards): a card made a payment method at the provider on the " +
      'way. In production (NODE_ENV=production) a body with source.card is refused, 422 VALIDATION_ERROR naming ' +
      'source.card, before anything is charged or stored: Meridian never receives a card number there',
  },
)
/**
 * How a payment is paid: a provider payment method, or (development and test only) a card made one at the provider on
 * the way.
 */
export const PaymentSource = Type.Union([TokenSource, CardSource], {
  description:
    "{token: 'pm_…'}: a payment method the provider made in the customer's browser; {card: {…}}: development and " +
    'test only, refused in production (422 naming source.card)',
})
export type PaymentSource = Static<typeof PaymentSource>

/** The currencies the provider charges in (lower-case ISO 4217). */
export const PaymentCurrency = Type.Literal('usd', { description: 'ISO 4217, lower-case; only usd for now' })

export const CreatePaymentBody = Type.Object(
  {
    orderId: Type.String({ format: 'uuid', maxLength: 36, description: 'the order this payment pays' }),
    amount: Type.Number({
      exclusiveMinimum: 0,
      maximum: maximumMoney,
      description: 'in major units with at most two decimals, e.g. 19.99; more than 0',
    }),
    currency: Type.Optional(PaymentCurrency),
    source: PaymentSource,
  },
  { additionalProperties: false },
)
export type CreatePaymentBody = Static<typeof CreatePaymentBody>

export const paymentStatuses = ['succeeded', 'failed', 'refunded'] as const
export type PaymentStatus = (typeof paymentStatuses)[number]

export const Payment = Type.Object(
  {
    paymentId: Type.String({ format: 'uuid', maxLength: 36 }),
    orderId: Type.String(),
    status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('refunded')]),
    amount: Money,
    brand: Type.Union([Type.String(), Type.Null()], {
      description: 'card brand, e.g. visa; null when the provider did not tell (a declined token)',
    }),
    last4: Type.Union([Type.String(), Type.Null()], {
      description: 'the last four digits of the card (never the number); null as brand',
    }),
    refundedAmount: Type.Optional({
      ...Money,
      description:
        'what was refunded of it so far, refunds made at the provider outside Meridian included; absent: nothing',
    }),
    disputedAt: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 40,
        description: "when the customer's bank disputed the charge (a chargeback); absent: never",
      }),
    ),
  },
  { additionalProperties: false },
)
export type Payment = Static<typeof Payment>

export const PaymentIdParams = Type.Object({ id: Type.String({ format: 'uuid', maxLength: 36 }) })
export type PaymentIdParams = Static<typeof PaymentIdParams>

/** The payment method an order carries for the payment step (order.placed's `payment`): a provider token. */
export const OrderPaymentMethod = Type.Object({ token: PaymentToken })
export type OrderPaymentMethod = Static<typeof OrderPaymentMethod>
