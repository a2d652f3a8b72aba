// One request of the Stripe subset as its handlers see it (stripe-payments.ts, stripe-resources.ts): the state it
// started with, its checked parameters, its ids, and where its changes' events go. Kept apart from the router
// (stripe-api.ts) so that handlers and router do not import each other.
import type { Core, RequestLog } from './core.ts'
import { redact, resourceMissing } from './errors.ts'
import type { FormObject } from './form.ts'
import type { StoredResponse } from './idempotency.ts'
import type { View } from './objects.ts'
import { checkKnown, type ParamShape, Params } from './params.ts'
import type { IntentRecord } from './state.ts'
import type { Change } from './transitions.ts'
import type { Webhooks } from './webhooks.ts'

/** What the Stripe subset's parts share for the simulator's life. */
export interface StripeContext {
  core: Core
  webhooks: Webhooks
  /** the simulator's address as a browser reaches it */
  baseUrl(): string
}

export interface StripeCall {
  context: StripeContext
  /** the state the request started with, and the address objects are rendered with */
  view: View
  /** aborted by reset() and close() */
  signal: AbortSignal
  /** the body's (POST) or query string's parameters, unchecked */
  values: FormObject
  /** the ids of the path (`/v1/payment_intents/:id/confirm`: [id]) */
  ids: string[]
  requestId: string
  idempotencyKey: string | null
  log: RequestLog
}

export type StripeHandler = (call: StripeCall) => Promise<StoredResponse> | StoredResponse

export const ok = (body: unknown): StoredResponse => ({ status: 200, body, headers: {} })

/** The call's parameters, refused (400 parameter_unknown) if any is not in `shape`. */
export function paramsOf(call: StripeCall, shape: { readonly [key: string]: ParamShape }): Params {
  checkKnown(call.values, shape)
  return new Params(call.values)
}

/** Where a change made by this call puts its events: the webhooks, naming this request. */
export function changeOf(call: StripeCall): Change {
  return {
    view: call.view,
    emit: (type, object) =>
      call.context.webhooks.publish(call.view.state, type, object, {
        id: call.requestId,
        idempotencyKey: call.idempotencyKey,
      }),
  }
}

/** The intent of the path (404, param `intent`), or of a parameter (`payment_intent`: 400). */
export function findIntent(call: StripeCall, id: string, param?: string): IntentRecord {
  const intent = call.view.state.intents.get(id)
  if (!intent)
    throw param
      ? resourceMissing('payment_intent', id, param, 400)
      : resourceMissing('payment_intent', id, 'intent')
  call.log.paymentIntent = intent.id
  if (intent.metadata.orderId !== undefined) call.log.orderId = redact(intent.metadata.orderId.slice(0, 200))
  return intent
}
