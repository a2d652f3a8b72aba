// The simulator's state, in memory only: the Stripe subset's payment methods, intents, charges, refunds, disputes,
// webhook endpoints and events, its idempotency store, the counters, and an order's summary. reset() replaces it
// whole.
import type { CardBrand, StripeCardBehavior } from './cards.ts'
import { IdempotencyStore } from './idempotency.ts'

export interface SimulatorStats {
  /** every request answered or abandoned, stats and reset included */
  requests: number
  /** payment methods made of cards (POST /v1/payment_methods) */
  paymentMethods: number
  /** charges that succeeded (captured) */
  charges: number
  /** charge attempts that failed (402, 429, 500): never counted as charged */
  failedCharges: number
  refunds: number
  /** refunds the provider declined (while its refunds are set to decline): never refunded */
  declinedRefunds: number
  /** minor units charged by succeeded charges (captured) */
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
  paymentMethods: Map<string, PaymentMethodRecord>
  intents: Map<string, IntentRecord>
  stripeCharges: Map<string, ChargeRecord>
  stripeRefunds: Map<string, StripeRefundRecord>
  disputes: Map<string, DisputeRecord>
  webhookEndpoints: Map<string, WebhookEndpointRecord>
  /** oldest first, the last maxEvents */
  events: StripeEvent[]
  /** keys per API key and path, expiring */
  stripeKeys: IdempotencyStore
  stats: SimulatorStats
  /** aborted by reset() and close(): calls in flight, waits and webhook deliveries of this state stop */
  inFlight: AbortController
}

/** How many events are kept for GET /v1/events. */
export const maxEvents = 1000

export const emptyStats = (): SimulatorStats => ({
  requests: 0,
  paymentMethods: 0,
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
  paymentMethods: new Map(),
  intents: new Map(),
  stripeCharges: new Map(),
  stripeRefunds: new Map(),
  disputes: new Map(),
  webhookEndpoints: new Map(),
  events: [],
  stripeKeys: new IdempotencyStore(idempotencyTtlMs),
  stats: emptyStats(),
  inFlight: new AbortController(),
})

/** Seconds since the epoch, as Stripe's `created` fields are. */
export const unixNow = (): number => Math.floor(Date.now() / 1000)

/**
 * What an order was charged and refunded: its intents are those with metadata[orderId]; succeeded (captured) charges
 * only in charges and charged, declines in failedCharges, succeeded refunds.
 */
export function orderSummary(state: State, orderId: string): OrderSummary {
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
    orderId,
    charges: captured.length,
    failedCharges: charges.filter((charge) => charge.status === 'failed').length,
    refunds: refunds.length,
    charged: captured.reduce((sum, charge) => sum + charge.amountCaptured, 0),
    refunded: refunds.reduce((sum, refund) => sum + refund.amount, 0),
  }
}
