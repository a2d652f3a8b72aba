// The Stripe subset's payment endpoints: PaymentMethods (a card checked, kept as brand, last four and behaviour) and
// PaymentIntents — create (and confirm), retrieve, confirm, capture, cancel, and the test helper that answers
// 3-D Secure. A payment attempt first goes through the simulator's faults and slow cards (paymentFaults), then
// transitions.ts makes the change whole.
import { cardDigits, summarizeCard } from './cards.ts'
import { invalidParameter, missingParameter, redact, StripeError, stripeApiError } from './errors.ts'
import { intentJson, paymentMethodJson } from './objects.ts'
import type { Params } from './params.ts'
import { captureMethods, type PaymentMethodRecord } from './state.ts'
import { changeOf, findIntent, ok, paramsOf, type StripeCall, type StripeHandler } from './stripe-call.ts'
import {
  addPaymentMethod,
  attempt,
  authenticate,
  type CardDetails,
  cancel,
  cancellationReasons,
  capture,
  createIntent,
  requireStatus,
  resolvePaymentMethod,
} from './transitions.ts'

const maxAmount = 99_999_999
const confirmable = ['requires_payment_method', 'requires_confirmation', 'requires_action'] as const

const cardError = (code: string, message: string, param: string) =>
  new StripeError(402, 'card_error', message, { code, param }, true)

/** A card's expiry, checked: 402 card errors as Stripe answers them, naming the parameter. */
function expiry(card: Params): { expMonth: number; expYear: number } {
  const wide = { min: -1e15, max: 1e15 }
  card.required('exp_month')
  card.required('exp_year')
  const expMonth = card.integer('exp_month', wide)!
  let expYear = card.integer('exp_year', wide)!
  if (!(expMonth >= 1 && expMonth <= 12))
    throw cardError(
      'invalid_expiry_month',
      "Your card's expiration month is invalid.",
      card.name('exp_month'),
    )
  if (expYear >= 0 && expYear < 100) expYear += 2000
  if (!(expYear >= 2000 && expYear <= 2100))
    throw cardError('invalid_expiry_year', "Your card's expiration year is invalid.", card.name('exp_year'))
  const now = new Date()
  const year = now.getUTCFullYear()
  if (expYear < year || (expYear === year && expMonth < now.getUTCMonth() + 1))
    throw cardError('expired_card', 'Your card has expired.', card.name('exp_year'))
  return { expMonth, expYear }
}

/** card[number], card[exp_month], card[exp_year], card[cvc] checked into what is kept: never the number. */
function cardDetails(card: Params): CardDetails {
  const number = card.required('number')
  const { expMonth, expYear } = expiry(card)
  const cvc = card.string('cvc')
  if (cvc !== undefined && !/^\d{3,4}$/.test(cvc))
    throw cardError('invalid_cvc', "Your card's security code is invalid.", card.name('cvc'))
  if (cardDigits(number) === undefined)
    throw cardError(
      'invalid_number',
      'Your card number is not a valid credit card number.',
      card.name('number'),
    )
  const summary = summarizeCard(number)
  if (!summary) throw cardError('incorrect_number', 'Your card number is incorrect.', card.name('number'))
  return { brand: summary.brand, last4: summary.last4, expMonth, expYear, behavior: summary.behavior }
}

const address = {
  line1: true,
  line2: true,
  city: true,
  state: true,
  postal_code: true,
  country: true,
} as const

const paymentMethodShape = {
  type: true,
  card: { number: true, exp_month: true, exp_year: true, cvc: true },
  billing_details: { name: true, email: true, phone: true, address },
  metadata: 'map',
  expand: 'list',
  // what Stripe.js sends along with a publishable key
  key: true,
  payment_user_agent: true,
  time_on_page: true,
  guid: true,
  muid: true,
  sid: true,
  referrer: true,
} as const

/** POST /v1/payment_methods: a card. */
export const createPaymentMethod: StripeHandler = (call) => {
  const params = paramsOf(call, paymentMethodShape)
  if (params.required('type') !== 'card')
    throw invalidParameter('type', 'Invalid type: only card is supported by the simulator.')
  const card = params.child('card')
  if (!card) throw missingParameter('card')
  const { state } = call.view
  const method = addPaymentMethod(state, cardDetails(card), params.metadata())
  state.stats.paymentMethods++
  call.log.brand = method.brand
  call.log.last4 = method.last4
  return ok(paymentMethodJson(method))
}

export const retrievePaymentMethod: StripeHandler = (call) => {
  paramsOf(call, { expand: 'list' })
  return ok(paymentMethodJson(resolvePaymentMethod(call.view.state, call.ids[0]!, 'id')))
}

/**
 * The simulator's faults and slow cards, before a payment attempt changes anything: an injected failure or the
 * provider-error card answers 500, the rate-limited card 429 (neither kept for the key), the delay and hang cards wait.
 */
async function paymentFaults(call: StripeCall, method: PaymentMethodRecord): Promise<void> {
  const { core } = call.context
  const { stats } = call.view.state
  const injected = core.injectedFailure()
  if (injected || method.behavior === 'provider_error') {
    stats.failedCharges++
    stats.providerErrors++
    throw stripeApiError()
  }
  if (method.behavior === 'rate_limit') {
    stats.failedCharges++
    throw new StripeError(
      429,
      'rate_limit_error',
      'Too many requests hit the API too quickly. We recommend an exponential backoff of your requests.',
      { code: 'rate_limit' },
      false,
      { 'retry-after': '30' },
    )
  }
  if (method.behavior === 'delay') await core.wait(core.settings.delayMs, call.signal)
  if (method.behavior === 'hang') await core.wait(core.settings.hangMs, call.signal)
}

function returnUrlOf(params: Params): string | undefined {
  const url = params.string('return_url')
  if (url === undefined) return undefined
  let protocol = ''
  try {
    protocol = new URL(url).protocol
  } catch {}
  if (protocol !== 'http:' && protocol !== 'https:')
    throw invalidParameter('return_url', 'Invalid URL: return_url must be an http(s) URL.', 'url_invalid')
  return url
}

/** off_session and error_on_requires_action: a 3-D Secure card then declines rather than asking. */
function attemptOptions(params: Params) {
  const offSession = params.string('off_session')
  if (offSession !== undefined && !['true', 'false', 'one_off', 'recurring'].includes(offSession))
    throw invalidParameter('off_session', 'Invalid off_session: must be a boolean, one_off or recurring.')
  return {
    offSession: offSession !== undefined && offSession !== 'false',
    errorOnRequiresAction: params.boolean('error_on_requires_action') ?? false,
  }
}

const intentShape = {
  amount: true,
  currency: true,
  payment_method: true,
  confirm: true,
  capture_method: true,
  return_url: true,
  metadata: 'map',
  description: true,
  expand: 'list',
  automatic_payment_methods: { enabled: true, allow_redirects: true },
  error_on_requires_action: true,
  off_session: true,
  payment_method_types: 'list',
} as const

/** The fields of a new intent, checked. */
function intentFields(params: Params) {
  const amount = params.integer('amount', {
    min: 1,
    max: maxAmount,
    tooSmall: 'amount_too_small',
    tooLarge: 'amount_too_large',
  })
  if (amount === undefined) throw missingParameter('amount')
  const currency = params.required('currency').toLowerCase()
  if (!/^[a-z]{3}$/.test(currency))
    throw invalidParameter('currency', `Invalid currency: ${redact(currency).slice(0, 20)}`)
  const automatic = params.child('automatic_payment_methods')
  const enabled = automatic?.boolean('enabled')
  if (automatic && enabled === undefined) throw missingParameter('automatic_payment_methods[enabled]')
  const allowRedirects = automatic?.choice('allow_redirects', ['always', 'never'])
  const types = params.list('payment_method_types')
  if (types.some((type) => type !== 'card'))
    throw invalidParameter('payment_method_types', 'Invalid payment_method_types: only card is supported.')
  return {
    amount,
    currency,
    captureMethod: params.choice('capture_method', captureMethods) ?? 'automatic',
    description: params.string('description') ?? null,
    metadata: params.metadata(),
    returnUrl: returnUrlOf(params) ?? null,
    automaticPaymentMethods:
      automatic && enabled !== undefined ? { enabled, ...(allowRedirects ? { allowRedirects } : {}) } : null,
    paymentMethodTypes: types.length > 0 ? types : ['card'],
  }
}

/** POST /v1/payment_intents: created, and confirmed at once with confirm=true. */
export const createPaymentIntent: StripeHandler = async (call) => {
  const params = paramsOf(call, intentShape)
  const fields = intentFields(params)
  const confirm = params.boolean('confirm') ?? false
  const options = attemptOptions(params)
  const methodId = params.string('payment_method')
  if (confirm && methodId === undefined) throw missingParameter('payment_method')
  if (fields.metadata.orderId !== undefined) call.log.orderId = redact(fields.metadata.orderId)
  const { state } = call.view
  const method = methodId === undefined ? undefined : resolvePaymentMethod(state, methodId)
  if (method) Object.assign(call.log, { brand: method.brand, last4: method.last4 })
  if (confirm && method) await paymentFaults(call, method)
  const intent = createIntent(state, { ...fields, paymentMethod: method?.id ?? null })
  call.log.paymentIntent = intent.id
  if (confirm && method) attempt(changeOf(call), intent, method, options)
  return ok(intentJson(call.view, intent, params.list('expand')))
}

export const retrievePaymentIntent: StripeHandler = (call) => {
  const params = paramsOf(call, { expand: 'list', client_secret: true })
  return ok(intentJson(call.view, findIntent(call, call.ids[0]!), params.list('expand')))
}

/** POST /v1/payment_intents/:id/confirm: with its payment method, or another one. */
export const confirmPaymentIntent: StripeHandler = async (call) => {
  const params = paramsOf(call, {
    payment_method: true,
    return_url: true,
    expand: 'list',
    error_on_requires_action: true,
    off_session: true,
    capture_method: true,
  })
  const intent = findIntent(call, call.ids[0]!)
  const returnUrl = returnUrlOf(params)
  const captureMethod = params.choice('capture_method', captureMethods)
  const options = attemptOptions(params)
  requireStatus(call.view, intent, 'confirm', confirmable)
  const methodId = params.string('payment_method') ?? intent.paymentMethod
  if (methodId === null)
    throw new StripeError(
      400,
      'invalid_request_error',
      "You cannot confirm this PaymentIntent because it's missing a payment method. Pass payment_method to confirm it.",
      { code: 'payment_intent_unexpected_state', payment_intent: intentJson(call.view, intent) },
      true,
    )
  const method = resolvePaymentMethod(call.view.state, methodId)
  Object.assign(call.log, { brand: method.brand, last4: method.last4 })
  await paymentFaults(call, method)
  // another call may have moved the intent on while this one waited
  requireStatus(call.view, intent, 'confirm', confirmable)
  if (returnUrl !== undefined) intent.returnUrl = returnUrl
  if (captureMethod !== undefined) intent.captureMethod = captureMethod
  attempt(changeOf(call), intent, method, options)
  return ok(intentJson(call.view, intent, params.list('expand')))
}

/** POST /v1/payment_intents/:id/capture: all that is capturable, or amount_to_capture of it. */
export const capturePaymentIntent: StripeHandler = (call) => {
  const params = paramsOf(call, { amount_to_capture: true, expand: 'list', metadata: 'map' })
  const intent = findIntent(call, call.ids[0]!)
  const amount = params.integer('amount_to_capture', { min: 1, max: maxAmount })
  capture(changeOf(call), intent, amount)
  return ok(intentJson(call.view, intent, params.list('expand')))
}

export const cancelPaymentIntent: StripeHandler = (call) => {
  const params = paramsOf(call, { cancellation_reason: true, expand: 'list' })
  const intent = findIntent(call, call.ids[0]!)
  cancel(changeOf(call), intent, params.choice('cancellation_reason', cancellationReasons))
  return ok(intentJson(call.view, intent, params.list('expand')))
}

/** POST /v1/test_helpers/payment_intents/:id/authenticate (simulator only): 3-D Secure answered without the page. */
export const authenticatePaymentIntent: StripeHandler = (call) => {
  const params = paramsOf(call, { outcome: true, expand: 'list' })
  const outcome = params.choice('outcome', ['confirm', 'refuse'] as const)
  if (outcome === undefined) throw missingParameter('outcome')
  const intent = findIntent(call, call.ids[0]!)
  authenticate(changeOf(call), intent, outcome)
  return ok(intentJson(call.view, intent, params.list('expand')))
}
