// The Stripe subset's other endpoints: refunds (with the simulator's refund faults: `decline` makes a failed refund,
// `fail` a 500), charges and refunds by id, disputes made by a test helper, webhook endpoints, and the events list.
import { invalidParameter, missingParameter, redact, resourceMissing, stripeApiError } from './errors.ts'
import { chargeJson, disputeJson, refundJson, webhookEndpointJson } from './objects.ts'
import type { Params } from './params.ts'
import type { ChargeRecord } from './state.ts'
import { changeOf, findIntent, ok, paramsOf, type StripeCall, type StripeHandler } from './stripe-call.ts'
import { capturedCharge, dispute, refund } from './transitions.ts'

const maxAmount = 99_999_999

/** The captured charge named by payment_intent or charge (one of them is required). */
function chargeFor(call: StripeCall, params: Params): ChargeRecord {
  const intentId = params.string('payment_intent')
  const chargeId = params.string('charge')
  if (intentId !== undefined) {
    const charge = capturedCharge(call.view, findIntent(call, intentId, 'payment_intent'))
    if (chargeId !== undefined && chargeId !== charge.id)
      throw invalidParameter('charge', 'The charge given is not the payment_intent’s charge.')
    return charge
  }
  if (chargeId === undefined) throw missingParameter('payment_intent')
  const charge = call.view.state.stripeCharges.get(chargeId)
  if (!charge) throw resourceMissing('charge', chargeId, 'charge', 400)
  return capturedCharge(call.view, findIntent(call, charge.paymentIntent))
}

const refundShape = {
  payment_intent: true,
  charge: true,
  amount: true,
  reason: true,
  metadata: 'map',
  expand: 'list',
} as const

/** POST /v1/refunds: the whole rest without amount; the faults decline (a failed refund) or fail (500) it. */
export const createRefund: StripeHandler = (call) => {
  const params = paramsOf(call, refundShape)
  const amount = params.integer('amount', { min: 1, max: maxAmount })
  const reason = params.choice('reason', ['duplicate', 'fraudulent', 'requested_by_customer'] as const)
  const metadata = params.metadata()
  if (!params.string('payment_intent') && !params.string('charge')) throw missingParameter('payment_intent')
  const { core } = call.context
  // the draw is made whatever the faults, so that setting them never shifts the seeded sequence
  if (core.injectedFailure() || core.faults().refunds === 'fail') {
    call.view.state.stats.providerErrors++
    throw stripeApiError()
  }
  const charge = chargeFor(call, params)
  call.log.charge = charge.id
  const record = refund(
    changeOf(call),
    charge,
    { amount, reason: reason ?? null, metadata },
    core.faults().refunds,
  )
  if (record.status === 'failed') call.log.code = 'refund_failed'
  return ok(refundJson(record))
}

export const retrieveRefund: StripeHandler = (call) => {
  paramsOf(call, { expand: 'list' })
  const record = call.view.state.stripeRefunds.get(call.ids[0]!)
  if (!record) throw resourceMissing('refund', call.ids[0]!, 'id')
  return ok(refundJson(record))
}

export const retrieveCharge: StripeHandler = (call) => {
  paramsOf(call, { expand: 'list' })
  const charge = call.view.state.stripeCharges.get(call.ids[0]!)
  if (!charge) throw resourceMissing('charge', call.ids[0]!, 'id')
  return ok(chargeJson(call.view.state, charge))
}

const disputeReasons = [
  'fraudulent',
  'duplicate',
  'product_not_received',
  'product_unacceptable',
  'subscription_canceled',
  'unrecognized',
  'credit_not_processed',
  'general',
] as const

/** POST /v1/test_helpers/disputes (simulator only): the customer's bank disputes a captured charge. */
export const createDispute: StripeHandler = (call) => {
  const params = paramsOf(call, { payment_intent: true, charge: true, reason: true })
  const reason = params.choice('reason', disputeReasons) ?? 'fraudulent'
  const charge = chargeFor(call, params)
  return ok(disputeJson(dispute(changeOf(call), charge, reason)))
}

const isHttpUrl = (text: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol)
  } catch {
    return false
  }
}

/** POST /v1/webhook_endpoints: answers the endpoint with its whsec_… secret (this answer only). */
export const createWebhookEndpoint: StripeHandler = (call) => {
  const params = paramsOf(call, {
    url: true,
    enabled_events: 'list',
    description: true,
    metadata: 'map',
    api_version: true,
    expand: 'list',
  })
  const url = params.required('url')
  if (!isHttpUrl(url))
    throw invalidParameter('url', 'Invalid URL: url must be an http(s) URL.', 'url_invalid')
  const enabledEvents = params.list('enabled_events')
  if (enabledEvents.length === 0) throw missingParameter('enabled_events')
  const wrong = enabledEvents.find((type) => !/^[a-z0-9_.*]{1,100}$/.test(type))
  if (wrong !== undefined)
    throw invalidParameter('enabled_events', `Invalid event type: ${redact(wrong.slice(0, 100))}`)
  const endpoint = call.context.webhooks.createEndpoint(call.view.state, {
    url,
    enabledEvents,
    description: params.string('description') ?? null,
    metadata: params.metadata(),
  })
  return ok(webhookEndpointJson(endpoint, true))
}

export const deleteWebhookEndpoint: StripeHandler = (call) => {
  paramsOf(call, {})
  const id = call.ids[0]!
  if (!call.view.state.webhookEndpoints.delete(id)) throw resourceMissing('webhook_endpoint', id, 'id')
  return ok({ id, object: 'webhook_endpoint', deleted: true })
}

/** GET /v1/events: the newest first, `limit` of them (10 by default), of one `type` if given (`charge.*` too). */
export const listEvents: StripeHandler = (call) => {
  const params = paramsOf(call, { limit: true, type: true, expand: 'list' })
  const limit = params.integer('limit', { min: 1, max: 100 }) ?? 10
  const type = params.string('type')
  const matches = (eventType: string) =>
    type === undefined || (type.endsWith('.*') ? eventType.startsWith(type.slice(0, -1)) : eventType === type)
  const events = [...call.view.state.events].reverse().filter((event) => matches(event.type))
  return ok({
    object: 'list',
    data: events.slice(0, limit),
    has_more: events.length > limit,
    url: '/v1/events',
  })
}

export const retrieveEvent: StripeHandler = (call) => {
  paramsOf(call, { expand: 'list' })
  const event = call.view.state.events.find((candidate) => candidate.id === call.ids[0])
  if (!event) throw resourceMissing('event', call.ids[0]!, 'id')
  return ok(event)
}
