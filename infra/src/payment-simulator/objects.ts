// The Stripe subset's wire format: each record of state.ts as the JSON object Stripe's API (version 2026-08-26.dahlia)
// answers it: PaymentMethod, PaymentIntent (latest_charge and payment_method expandable), Charge (with its refunds),
// Refund, Dispute, WebhookEndpoint. Pure functions of the state; nothing here changes it.
import type {
  ChargeRecord,
  DisputeRecord,
  IntentRecord,
  PaymentError,
  PaymentMethodRecord,
  State,
  StripeRefundRecord,
  WebhookEndpointRecord,
} from './state.ts'

export const apiVersion = '2026-08-26.dahlia'

/** What rendering needs besides a record: the state (for linked records) and the simulator's public address. */
export interface View {
  state: State
  /** http://host:port of the simulator as a browser reaches it: the 3-D Secure page's address */
  baseUrl: string
}

const emptyAddress = () => ({
  city: null,
  country: null,
  line1: null,
  line2: null,
  postal_code: null,
  state: null,
})

const billingDetails = () => ({ address: emptyAddress(), email: null, name: null, phone: null, tax_id: null })

export function paymentMethodJson(method: PaymentMethodRecord) {
  return {
    id: method.id,
    object: 'payment_method' as const,
    allow_redisplay: 'unspecified',
    billing_details: billingDetails(),
    card: {
      brand: method.brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
      country: 'US',
      display_brand: method.brand,
      exp_month: method.expMonth,
      exp_year: method.expYear,
      funding: 'credit',
      last4: method.last4,
      networks: { available: [method.brand], preferred: null },
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created: method.created,
    customer: null,
    livemode: false,
    metadata: { ...method.metadata },
    type: 'card' as const,
  }
}

export function refundJson(refund: StripeRefundRecord) {
  return {
    id: refund.id,
    object: 'refund' as const,
    amount: refund.amount,
    balance_transaction: null,
    charge: refund.charge,
    created: refund.created,
    currency: refund.currency,
    ...(refund.status === 'failed' ? { failure_reason: refund.failureReason } : {}),
    metadata: { ...refund.metadata },
    payment_intent: refund.paymentIntent,
    reason: refund.reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: refund.status,
    transfer_reversal: null,
  }
}

function chargeOutcome(charge: ChargeRecord) {
  return charge.status === 'succeeded'
    ? {
        network_status: 'approved_by_network',
        reason: null,
        risk_level: 'normal',
        seller_message: 'Payment complete.',
        type: 'authorized',
      }
    : {
        network_status: 'declined_by_network',
        reason: charge.declineCode,
        risk_level: 'normal',
        seller_message: 'The bank did not return any further details with this decline.',
        type: 'issuer_declined',
      }
}

function cardDetails(charge: ChargeRecord) {
  return {
    type: 'card' as const,
    card: {
      brand: charge.brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
      country: 'US',
      exp_month: charge.expMonth,
      exp_year: charge.expYear,
      funding: 'credit',
      last4: charge.last4,
      network: charge.brand,
      three_d_secure: charge.authenticated
        ? { authentication_flow: 'challenge', result: 'authenticated', version: '2.2.0' }
        : null,
    },
  }
}

export function chargeJson(state: State, charge: ChargeRecord) {
  const refunds = charge.refunds
    .map((id) => state.stripeRefunds.get(id))
    .filter((refund) => refund !== undefined)
    .reverse()
    .map(refundJson)
  return {
    id: charge.id,
    object: 'charge' as const,
    amount: charge.amount,
    amount_captured: charge.amountCaptured,
    amount_refunded: charge.amountRefunded,
    balance_transaction: null,
    billing_details: billingDetails(),
    captured: charge.captured,
    created: charge.created,
    currency: charge.currency,
    customer: null,
    description: charge.description,
    disputed: charge.disputed,
    failure_code: charge.failureCode,
    failure_message: charge.failureMessage,
    livemode: false,
    metadata: { ...charge.metadata },
    outcome: chargeOutcome(charge),
    paid: charge.status === 'succeeded',
    payment_intent: charge.paymentIntent,
    payment_method: charge.paymentMethod,
    payment_method_details: cardDetails(charge),
    refunded: charge.refunded,
    refunds: {
      object: 'list' as const,
      data: refunds,
      has_more: false,
      total_count: refunds.length,
      url: `/v1/charges/${charge.id}/refunds`,
    },
    status: charge.status,
  }
}

function lastPaymentErrorJson(state: State, error: PaymentError | null) {
  if (!error) return null
  const method = error.paymentMethod ? state.paymentMethods.get(error.paymentMethod) : undefined
  return {
    type: error.type,
    code: error.code,
    ...(error.declineCode ? { decline_code: error.declineCode } : {}),
    ...(error.charge ? { charge: error.charge } : {}),
    doc_url: `https://stripe.com/docs/error-codes/${error.code.replace(/_/g, '-')}`,
    message: error.message,
    ...(method ? { payment_method: paymentMethodJson(method) } : {}),
  }
}

/** The page that authenticates an intent (three-d-secure.ts). */
export const threeDSecureUrl = (baseUrl: string, intentId: string): string =>
  `${baseUrl}/3ds/${encodeURIComponent(intentId)}`

function nextActionJson(baseUrl: string, intent: IntentRecord) {
  if (intent.status !== 'requires_action') return null
  const url = threeDSecureUrl(baseUrl, intent.id)
  if (intent.returnUrl)
    return { type: 'redirect_to_url', redirect_to_url: { url, return_url: intent.returnUrl } }
  return { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: url } }
}

function expandable<T>(id: string | null, expanded: boolean, find: (id: string) => T | undefined) {
  if (id === null || !expanded) return id
  return find(id) ?? id
}

/** A PaymentIntent; `expand` may name latest_charge and payment_method (others are left as they are). */
export function intentJson(view: View, intent: IntentRecord, expand: readonly string[] = []) {
  const { state } = view
  const charge = (id: string) => {
    const record = state.stripeCharges.get(id)
    return record ? chargeJson(state, record) : undefined
  }
  const method = (id: string) => {
    const record = state.paymentMethods.get(id)
    return record ? paymentMethodJson(record) : undefined
  }
  return {
    id: intent.id,
    object: 'payment_intent' as const,
    amount: intent.amount,
    amount_capturable: intent.amountCapturable,
    amount_received: intent.amountReceived,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: intent.automaticPaymentMethods
      ? {
          enabled: intent.automaticPaymentMethods.enabled,
          ...(intent.automaticPaymentMethods.allowRedirects
            ? { allow_redirects: intent.automaticPaymentMethods.allowRedirects }
            : {}),
        }
      : null,
    canceled_at: intent.canceledAt,
    cancellation_reason: intent.cancellationReason,
    capture_method: intent.captureMethod,
    client_secret: intent.clientSecret,
    confirmation_method: 'automatic' as const,
    created: intent.created,
    currency: intent.currency,
    customer: null,
    description: intent.description,
    last_payment_error: lastPaymentErrorJson(state, intent.lastPaymentError),
    latest_charge: expandable(intent.latestCharge, expand.includes('latest_charge'), charge),
    livemode: false,
    metadata: { ...intent.metadata },
    next_action: nextActionJson(view.baseUrl, intent),
    on_behalf_of: null,
    payment_method: expandable(intent.paymentMethod, expand.includes('payment_method'), method),
    payment_method_options: { card: { request_three_d_secure: 'automatic' } },
    payment_method_types: [...intent.paymentMethodTypes],
    processing: null,
    receipt_email: null,
    setup_future_usage: null,
    shipping: null,
    statement_descriptor: null,
    status: intent.status,
    transfer_data: null,
    transfer_group: null,
  }
}

export function disputeJson(dispute: DisputeRecord) {
  return {
    id: dispute.id,
    object: 'dispute' as const,
    amount: dispute.amount,
    charge: dispute.charge,
    created: dispute.created,
    currency: dispute.currency,
    evidence_details: {
      due_by: dispute.created + 7 * 86400,
      has_evidence: false,
      past_due: false,
      submission_count: 0,
    },
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: dispute.paymentIntent,
    reason: dispute.reason,
    status: dispute.status,
  }
}

/** `secret` only in the answer to its creation, as Stripe does. */
export function webhookEndpointJson(endpoint: WebhookEndpointRecord, withSecret: boolean) {
  return {
    id: endpoint.id,
    object: 'webhook_endpoint' as const,
    api_version: apiVersion,
    created: endpoint.created,
    description: endpoint.description,
    enabled_events: [...endpoint.enabledEvents],
    livemode: false,
    metadata: { ...endpoint.metadata },
    ...(withSecret ? { secret: endpoint.secret } : {}),
    status: 'enabled',
    url: endpoint.url,
  }
}
