// The Stripe subset's objects and how they change: payment methods made or looked up (pm_…, Stripe's test ids), and a
// PaymentIntent's life — created, confirmed (succeeded, requires_capture,
// requires_action or declined), authenticated or refused (3-D Secure), captured, cancelled — with its charge, refunds
// and disputes, the shared counters, and the webhook events each change raises. Synchronous: the waits and injected
// faults of an attempt are the caller's (stripe-handlers.ts), so a change is made whole or not at all.
import { type StripeCardBehavior, summarizeCard, testPaymentMethods } from './cards.ts'
import { newId, resourceMissing, StripeError } from './errors.ts'
import { chargeJson, disputeJson, intentJson, paymentMethodJson, type View } from './objects.ts'
import type { RefundBehavior } from './options.ts'
import {
  type CaptureMethod,
  type ChargeRecord,
  type DisputeRecord,
  type IntentRecord,
  type IntentStatus,
  type Metadata,
  type PaymentError,
  type PaymentMethodRecord,
  type State,
  type StripeRefundRecord,
  unixNow,
} from './state.ts'

export const eventTypes = [
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.requires_action',
  'payment_intent.canceled',
  'charge.refunded',
  'charge.dispute.created',
] as const
export type EventType = (typeof eventTypes)[number]

/** What a change needs: the state and address to render with, and where its events go. */
export interface Change {
  view: View
  emit(type: EventType, object: unknown): void
}

export interface CardDetails {
  brand: PaymentMethodRecord['brand']
  last4: string
  expMonth: number
  expYear: number
  behavior: StripeCardBehavior
}

export function addPaymentMethod(
  state: State,
  card: CardDetails,
  metadata: Metadata = {},
): PaymentMethodRecord {
  const method: PaymentMethodRecord = { id: newId('pm'), created: unixNow(), ...card, metadata }
  state.paymentMethods.set(method.id, method)
  return method
}

/**
 * The payment method an id names: a pm_… made here, or one of Stripe's test ids (pm_card_visa, ...), which becomes a
 * new pm_…, as Stripe's do.
 */
export function resolvePaymentMethod(
  state: State,
  id: string,
  param = 'payment_method',
): PaymentMethodRecord {
  const existing = state.paymentMethods.get(id)
  if (existing) return existing
  const testNumber = Object.hasOwn(testPaymentMethods, id) ? testPaymentMethods[id] : undefined
  const summary = testNumber ? summarizeCard(testNumber) : undefined
  if (summary)
    return addPaymentMethod(state, {
      brand: summary.brand,
      last4: summary.last4,
      expMonth: 12,
      expYear: new Date().getUTCFullYear() + 2,
      behavior: summary.behavior,
    })
  throw resourceMissing('PaymentMethod', id, param, param === 'id' ? 404 : 400)
}

export interface IntentFields {
  amount: number
  currency: string
  captureMethod: CaptureMethod
  description: string | null
  metadata: Metadata
  paymentMethod: string | null
  returnUrl: string | null
  automaticPaymentMethods: IntentRecord['automaticPaymentMethods']
  paymentMethodTypes: string[]
}

export function createIntent(state: State, fields: IntentFields): IntentRecord {
  const id = newId('pi')
  const intent: IntentRecord = {
    id,
    created: unixNow(),
    ...fields,
    status: fields.paymentMethod ? 'requires_confirmation' : 'requires_payment_method',
    clientSecret: `${id}_secret_${newId('s').slice(2)}`,
    latestCharge: null,
    lastPaymentError: null,
    amountCapturable: 0,
    amountReceived: 0,
    canceledAt: null,
    cancellationReason: null,
  }
  state.intents.set(id, intent)
  return intent
}

const statusVerbs = {
  confirm: ['confirm', 'confirmed'],
  capture: ['capture', 'captured'],
  cancel: ['cancel', 'canceled'],
  authenticate: ['authenticate', 'authenticated'],
} as const

/** 400 payment_intent_unexpected_state unless the intent is in one of `allowed`; kept for the key. */
export function requireStatus(
  view: View,
  intent: IntentRecord,
  action: keyof typeof statusVerbs,
  allowed: readonly IntentStatus[],
): void {
  if (allowed.includes(intent.status)) return
  const [verb, done] = statusVerbs[action]
  throw new StripeError(
    400,
    'invalid_request_error',
    `You cannot ${verb} this PaymentIntent because it has a status of ${intent.status}. Only a PaymentIntent with one of the following statuses may be ${done}: ${allowed.join(', ')}.`,
    { code: 'payment_intent_unexpected_state', payment_intent: intentJson(view, intent) },
    true,
  )
}

function newCharge(intent: IntentRecord, method: PaymentMethodRecord): ChargeRecord {
  return {
    id: newId('ch'),
    created: unixNow(),
    amount: intent.amount,
    amountCaptured: 0,
    amountRefunded: 0,
    captured: false,
    status: 'succeeded',
    currency: intent.currency,
    description: intent.description,
    metadata: { ...intent.metadata },
    paymentIntent: intent.id,
    paymentMethod: method.id,
    brand: method.brand,
    last4: method.last4,
    expMonth: method.expMonth,
    expYear: method.expYear,
    failureCode: null,
    failureMessage: null,
    declineCode: null,
    refunds: [],
    disputed: false,
    authenticated: false,
    refunded: false,
  }
}

/** The charge of a payment that went through: captured at once, or authorised for a manual capture. */
export function succeed(
  change: Change,
  intent: IntentRecord,
  method: PaymentMethodRecord,
  authenticated: boolean,
) {
  const { state } = change.view
  const charge = newCharge(intent, method)
  charge.authenticated = authenticated
  state.stripeCharges.set(charge.id, charge)
  intent.latestCharge = charge.id
  intent.paymentMethod = method.id
  intent.lastPaymentError = null
  if (intent.captureMethod === 'manual') {
    intent.status = 'requires_capture'
    intent.amountCapturable = intent.amount
    return
  }
  charge.captured = true
  charge.amountCaptured = intent.amount
  intent.status = 'succeeded'
  intent.amountReceived = intent.amount
  state.stats.charges++
  state.stats.charged += intent.amount
  change.emit('payment_intent.succeeded', intentJson(change.view, intent))
}

const declineMessages: Record<string, string> = {
  generic_decline: 'Your card was declined.',
  insufficient_funds: 'Your card has insufficient funds.',
  authentication_required: 'Your card was declined. This transaction requires authentication.',
}

/** A card declined: a failed charge, the intent back to requires_payment_method, and the 402 that says so. */
export function decline(
  change: Change,
  intent: IntentRecord,
  method: PaymentMethodRecord,
  declineCode: 'generic_decline' | 'insufficient_funds' | 'authentication_required',
): StripeError {
  const { state } = change.view
  const code = declineCode === 'authentication_required' ? 'authentication_required' : 'card_declined'
  const message = declineMessages[declineCode]!
  const charge = newCharge(intent, method)
  Object.assign(charge, { status: 'failed', failureCode: code, failureMessage: message, declineCode })
  state.stripeCharges.set(charge.id, charge)
  state.stats.failedCharges++
  const error: PaymentError = {
    type: 'card_error',
    code,
    declineCode,
    message,
    charge: charge.id,
    paymentMethod: method.id,
  }
  Object.assign(intent, { status: 'requires_payment_method', latestCharge: charge.id, paymentMethod: null })
  intent.lastPaymentError = error
  const shown = intentJson(change.view, intent)
  change.emit('payment_intent.payment_failed', shown)
  return new StripeError(
    402,
    'card_error',
    message,
    {
      code,
      decline_code: declineCode,
      charge: charge.id,
      payment_intent: shown,
      payment_method: paymentMethodJson(method),
    },
    true,
  )
}

export interface AttemptOptions {
  offSession: boolean
  errorOnRequiresAction: boolean
}

/** Confirms with a payment method whose waits and faults are behind it; throws the 402 of a decline. */
export function attempt(
  change: Change,
  intent: IntentRecord,
  method: PaymentMethodRecord,
  options: AttemptOptions,
) {
  intent.paymentMethod = method.id
  switch (method.behavior) {
    case 'generic_decline':
    case 'insufficient_funds':
      throw decline(change, intent, method, method.behavior)
    case 'three_d_secure':
      if (options.offSession || options.errorOnRequiresAction)
        throw decline(change, intent, method, 'authentication_required')
      intent.status = 'requires_action'
      intent.lastPaymentError = null
      change.emit('payment_intent.requires_action', intentJson(change.view, intent))
      return
    case 'dispute': {
      // as Stripe's dispute cards: the charge succeeds, then its dispute follows (a captured charge's)
      succeed(change, intent, method, false)
      const charge = intent.latestCharge
        ? change.view.state.stripeCharges.get(intent.latestCharge)
        : undefined
      if (charge?.captured) dispute(change, charge, 'product_not_received')
      return
    }
    default:
      succeed(change, intent, method, false)
  }
}

/** The customer's answer to 3-D Secure: the payment goes through, or the intent wants another payment method. */
export function authenticate(change: Change, intent: IntentRecord, outcome: 'confirm' | 'refuse'): void {
  requireStatus(change.view, intent, 'authenticate', ['requires_action'])
  const method = intent.paymentMethod ? change.view.state.paymentMethods.get(intent.paymentMethod) : undefined
  if (outcome === 'confirm' && method) {
    succeed(change, intent, method, true)
    return
  }
  intent.status = 'requires_payment_method'
  intent.lastPaymentError = {
    type: 'invalid_request_error',
    code: 'payment_intent_authentication_failure',
    message:
      'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
    ...(method ? { paymentMethod: method.id } : {}),
  }
  intent.paymentMethod = null
  change.emit('payment_intent.payment_failed', intentJson(change.view, intent))
}

export function capture(change: Change, intent: IntentRecord, amountToCapture: number | undefined): void {
  requireStatus(change.view, intent, 'capture', ['requires_capture'])
  const amount = amountToCapture ?? intent.amountCapturable
  if (amount > intent.amountCapturable)
    throw new StripeError(
      400,
      'invalid_request_error',
      `The amount to capture (${amount}) is greater than the amount capturable (${intent.amountCapturable}).`,
      { code: 'amount_too_large', param: 'amount_to_capture' },
      true,
    )
  const { state } = change.view
  const charge = intent.latestCharge ? state.stripeCharges.get(intent.latestCharge) : undefined
  if (charge) Object.assign(charge, { captured: true, amountCaptured: amount })
  Object.assign(intent, { status: 'succeeded', amountReceived: amount, amountCapturable: 0 })
  state.stats.charges++
  state.stats.charged += amount
  change.emit('payment_intent.succeeded', intentJson(change.view, intent))
}

export const cancellationReasons = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] as const

export function cancel(change: Change, intent: IntentRecord, reason: string | undefined): void {
  requireStatus(change.view, intent, 'cancel', [
    'requires_payment_method',
    'requires_confirmation',
    'requires_action',
    'requires_capture',
  ])
  Object.assign(intent, {
    status: 'canceled',
    canceledAt: unixNow(),
    cancellationReason: reason ?? null,
    amountCapturable: 0,
  })
  change.emit('payment_intent.canceled', intentJson(change.view, intent))
}

/** The succeeded, captured charge a refund or dispute is about, or the 400 that says there is none. */
export function capturedCharge(view: View, intent: IntentRecord): ChargeRecord {
  const charge = intent.latestCharge ? view.state.stripeCharges.get(intent.latestCharge) : undefined
  if (intent.status !== 'succeeded' || !charge || charge.status !== 'succeeded' || !charge.captured)
    throw new StripeError(
      400,
      'invalid_request_error',
      `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
      { code: 'charge_not_refundable', param: 'payment_intent' },
      true,
    )
  return charge
}

export interface RefundFields {
  amount: number | undefined
  reason: string | null
  metadata: Metadata
}

/** A refund of a captured charge, whole (no amount) or in part; `declined` (the faults) makes it a failed refund. */
export function refund(
  change: Change,
  charge: ChargeRecord,
  fields: RefundFields,
  behavior: RefundBehavior,
): StripeRefundRecord {
  const { state } = change.view
  const remaining = charge.amountCaptured - charge.amountRefunded
  if (remaining === 0)
    throw new StripeError(
      400,
      'invalid_request_error',
      `Charge ${charge.id} has already been refunded.`,
      { code: 'charge_already_refunded', charge: charge.id },
      true,
    )
  const amount = fields.amount ?? remaining
  if (amount > remaining)
    throw new StripeError(
      400,
      'invalid_request_error',
      `Refund amount (${amount}) is greater than unrefunded amount on charge (${remaining}).`,
      { code: 'amount_too_large', param: 'amount' },
      true,
    )
  const declined = behavior === 'decline'
  const record: StripeRefundRecord = {
    id: newId('re'),
    created: unixNow(),
    amount,
    charge: charge.id,
    paymentIntent: charge.paymentIntent,
    currency: charge.currency,
    status: declined ? 'failed' : 'succeeded',
    reason: fields.reason,
    failureReason: declined ? 'declined' : null,
    metadata: fields.metadata,
  }
  state.stripeRefunds.set(record.id, record)
  charge.refunds.push(record.id)
  if (declined) {
    state.stats.declinedRefunds++
    return record
  }
  charge.amountRefunded += amount
  charge.refunded = charge.amountRefunded === charge.amountCaptured
  state.stats.refunds++
  state.stats.refunded += amount
  change.emit('charge.refunded', chargeJson(state, charge))
  return record
}

export function dispute(change: Change, charge: ChargeRecord, reason: string): DisputeRecord {
  if (charge.disputed)
    throw new StripeError(
      400,
      'invalid_request_error',
      `Charge ${charge.id} is already disputed.`,
      { code: 'charge_disputed', charge: charge.id },
      true,
    )
  const record: DisputeRecord = {
    id: newId('dp'),
    created: unixNow(),
    amount: charge.amountCaptured,
    charge: charge.id,
    paymentIntent: charge.paymentIntent,
    currency: charge.currency,
    reason,
    status: 'needs_response',
  }
  change.view.state.disputes.set(record.id, record)
  charge.disputed = true
  change.emit('charge.dispute.created', disputeJson(record))
  return record
}
