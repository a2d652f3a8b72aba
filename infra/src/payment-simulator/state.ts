// The simulator's state, in memory only: the records of both APIs (the simulator's own tokens, charges and refunds;
// the Stripe subset's payment methods, intents, charges, refunds, disputes, webhook endpoints and events), the
// idempotency stores, the counters, and the order summary that counts money of both APIs. reset() replaces it whole.
import type { CardBehavior, CardBrand, StripeCardBehavior } from './cards.ts'
import { IdempotencyStore } from './idempotency.ts'

export interface SimulatorStats {
  /** every request answered or abandoned, stats and reset included */
  requests: number
  /** cards tokenized: tokens (POST /v1/tokens) and payment methods (POST /v1/payment_methods) */
  tokens: number
  /** charges that succeeded (Stripe subset: captured) */
  charges: number
  /** charge attempts that failed (402, 429, 500): never counted as charged */
  failedCharges: number
  refunds: number
  /** refunds the provider declined (while its refunds are set to decline): never refunded */
  declinedRefunds: number
  /** minor units charged by succeeded charges (Stripe subset: captured) */
  charged: number
  /** minor units refunded */
  refunded: number
  /** answers replayed from the idempotency stores */
  replays: number
  /** 500 answers of charges and refunds (the provider-error card, the failure rate, refunds set to fail) */
  providerErrors: number
  /** webhook delivery attempts made (each retry counts) */
  webhooksSent: number
  /** webhook deliveries answered 2xx */
  webhooksDelivered: number
  /** webhook deliveries given up after their last retry */
  webhooksFailed: number
}

export interface OrderSummary {
  orderId: string
  charges: number
  failedCharges: number
  refunds: number
  charged: number
  refunded: number
}

/** A token of the simulator's own API: what is kept of its card (never the number). */
export interface Token {
  id: string
  brand: CardBrand
  last4: string
  behavior: CardBehavior
  stripeBehavior: StripeCardBehavior
  expMonth: number
  expYear: number
}

/** A charge of the simulator's own API, as GET /v1/charges/:id shows it. */
export interface LegacyCharge {
  id: string
  object: 'charge'
  status: 'succeeded' | 'failed'
  amount: number
  currency: string
  orderId: string
  description: string | null
  brand: CardBrand
  last4: string
  amountRefunded: number
  refunded: boolean
  failureCode: string | null
  created: string
}

export interface LegacyRefund {
  id: string
  object: 'refund'
  charge: string
  amount: number
  status: 'succeeded'
  created: string
}

export type Metadata = Record<string, string>

/** A card PaymentMethod (`pm_…`): brand, last four, expiry and the behaviour its number selected. */
export interface PaymentMethodRecord {
  id: string
  created: number
  brand: CardBrand
  last4: string
  expMonth: number
  expYear: number
  behavior: StripeCardBehavior
  metadata: Metadata
}

export type IntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'requires_capture'
  | 'canceled'
  | 'succeeded'

export const captureMethods = ['automatic', 'automatic_async', 'manual'] as const
export type CaptureMethod = (typeof captureMethods)[number]

/** An intent's last_payment_error. */
export interface PaymentError {
  type: 'card_error' | 'invalid_request_error'
  code: string
  declineCode?: string
  message: string
  charge?: string
  paymentMethod?: string
}

export interface IntentRecord {
  id: string
  created: number
  amount: number
  currency: string
  status: IntentStatus
  captureMethod: CaptureMethod
  clientSecret: string
  description: string | null
  metadata: Metadata
  paymentMethod: string | null
  returnUrl: string | null
  latestCharge: string | null
  lastPaymentError: PaymentError | null
  amountCapturable: number
  amountReceived: number
  canceledAt: number | null
  cancellationReason: string | null
  automaticPaymentMethods: { enabled: boolean; allowRedirects?: string } | null
  paymentMethodTypes: string[]
}

export interface ChargeRecord {
  id: string
  created: number
  amount: number
  amountCaptured: number
  amountRefunded: number
  /** refunded whole: amountRefunded equals amountCaptured */
  refunded: boolean
  captured: boolean
  status: 'succeeded' | 'failed'
  currency: string
  description: string | null
  metadata: Metadata
  paymentIntent: string
  paymentMethod: string
  brand: CardBrand
  last4: string
  expMonth: number
  expYear: number
  failureCode: string | null
  failureMessage: string | null
  declineCode: string | null
  /** ids of its refunds, oldest first */
  refunds: string[]
  disputed: boolean
  /** 3-D Secure authenticated before it was made */
  authenticated: boolean
}

export interface StripeRefundRecord {
  id: string
  created: number
  amount: number
  charge: string
  paymentIntent: string
  currency: string
  status: 'succeeded' | 'failed'
  reason: string | null
  failureReason: string | null
  metadata: Metadata
}

export interface DisputeRecord {
  id: string
  created: number
  amount: number
  charge: string
  paymentIntent: string
  currency: string
  reason: string
  status: 'needs_response'
}

export interface WebhookEndpointRecord {
  id: string
  created: number
  url: string
  secret: string
  enabledEvents: string[]
  description: string | null
  metadata: Metadata
}

/** An Event as Stripe sends it (and GET /v1/events lists it). */
export interface StripeEvent {
  id: string
  object: 'event'
  api_version: string
  created: number
  data: { object: unknown }
  livemode: false
  pending_webhooks: number
  request: { id: string | null; idempotency_key: string | null }
  type: string
}

export interface State {
  tokens: Map<string, Token>
  charges: Map<string, LegacyCharge>
  refunds: Map<string, LegacyRefund>
  paymentMethods: Map<string, PaymentMethodRecord>
  intents: Map<string, IntentRecord>
  stripeCharges: Map<string, ChargeRecord>
  stripeRefunds: Map<string, StripeRefundRecord>
  disputes: Map<string, DisputeRecord>
  webhookEndpoints: Map<string, WebhookEndpointRecord>
  /** oldest first, the last maxEvents */
  events: StripeEvent[]
  /** the simulator's own API: one namespace of keys, never expiring */
  legacyKeys: IdempotencyStore
  /** the Stripe subset: keys per API key and path, expiring */
  stripeKeys: IdempotencyStore
  stats: SimulatorStats
  /** aborted by reset() and close(): calls in flight, waits and webhook deliveries of this state stop */
  inFlight: AbortController
}

/** How many events are kept for GET /v1/events. */
export const maxEvents = 1000

export const emptyStats = (): SimulatorStats => ({
  requests: 0,
  tokens: 0,
  charges: 0,
  failedCharges: 0,
  refunds: 0,
  declinedRefunds: 0,
  charged: 0,
  refunded: 0,
  replays: 0,
  providerErrors: 0,
  webhooksSent: 0,
  webhooksDelivered: 0,
  webhooksFailed: 0,
})

export const newState = (idempotencyTtlMs: number): State => ({
  tokens: new Map(),
  charges: new Map(),
  refunds: new Map(),
  paymentMethods: new Map(),
  intents: new Map(),
  stripeCharges: new Map(),
  stripeRefunds: new Map(),
  disputes: new Map(),
  webhookEndpoints: new Map(),
  events: [],
  legacyKeys: new IdempotencyStore(),
  stripeKeys: new IdempotencyStore(idempotencyTtlMs),
  stats: emptyStats(),
  inFlight: new AbortController(),
})

/** Seconds since the epoch, as Stripe's `created` fields are. */
export const unixNow = (): number => Math.floor(Date.now() / 1000)

/** The Stripe subset's part of an order's summary: intents with metadata[orderId], their charges and refunds. */
function stripeSummary(state: State, orderId: string): Omit<OrderSummary, 'orderId'> {
  const intents = new Set(
    [...state.intents.values()]
      .filter((intent) => intent.metadata.orderId === orderId)
      .map((intent) => intent.id),
  )
  const charges = [...state.stripeCharges.values()].filter((charge) => intents.has(charge.paymentIntent))
  const captured = charges.filter((charge) => charge.status === 'succeeded' && charge.amountCaptured > 0)
  const refunds = [...state.stripeRefunds.values()].filter(
    (refund) => intents.has(refund.paymentIntent) && refund.status === 'succeeded',
  )
  return {
    charges: captured.length,
    failedCharges: charges.filter((charge) => charge.status === 'failed').length,
    refunds: refunds.length,
    charged: captured.reduce((sum, charge) => sum + charge.amountCaptured, 0),
    refunded: refunds.reduce((sum, refund) => sum + refund.amount, 0),
  }
}

/** What an order was charged and refunded, on both APIs: succeeded (captured) charges only in charges and charged. */
export function orderSummary(state: State, orderId: string): OrderSummary {
  const charges = [...state.charges.values()].filter((charge) => charge.orderId === orderId)
  const succeeded = charges.filter((charge) => charge.status === 'succeeded')
  const ids = new Set(charges.map((charge) => charge.id))
  const refunds = [...state.refunds.values()].filter((refund) => ids.has(refund.charge))
  const stripe = stripeSummary(state, orderId)
  return {
    orderId,
    charges: succeeded.length + stripe.charges,
    failedCharges: charges.length - succeeded.length + stripe.failedCharges,
    refunds: refunds.length + stripe.refunds,
    charged: succeeded.reduce((sum, charge) => sum + charge.amount, 0) + stripe.charged,
    refunded: refunds.reduce((sum, refund) => sum + refund.amount, 0) + stripe.refunded,
  }
}
