// The provider's webhook events (Stripe's, their signature checked by the route), applied once each. A PaymentIntent
// that succeeded or failed settles the charge attempt it was made under (the event names the request's idempotency
// key) through the reconciler's own settlement, under the order's lock: a charge whose answer was lost is settled by
// its webhook or by the reconciler's round, whichever comes first, never twice; one settled already is left as it is.
// A payment that waited for the customer's authentication (3-D Secure) is settled by its id the same way when it
// succeeded, failed or was cancelled (authentication.ts).
// Every other type is acknowledged and kept. The event is recorded after it was applied: a redelivery finds it and is
// acknowledged without applying it again; one that comes while the first still applies applies nothing the first did
// not (the settlement is idempotent).
// Refunds made at the provider (charge.refunded) and chargebacks (charge.dispute.created): provider-charge-events.ts.
import type { ProviderEventsRepository } from '../data/provider-events-repository.ts'
import {
  type ProviderChargeEventsDependencies,
  providerChargeEventTypes,
  receiveProviderChargeEvent,
} from './provider-charge-events.ts'
import type { ProviderEvent, ProviderEventOutcome } from './provider-event.ts'
import type { Reconciliation } from './reconciler.ts'

export type { ProviderEvent, ProviderEventOutcome } from './provider-event.ts'

export interface ProviderEventsDependencies extends ProviderChargeEventsDependencies {
  providerEvents: ProviderEventsRepository
  reconciler: {
    reconcileKey(idempotencyKey: string): Promise<Reconciliation | undefined>
    settleIntent(intentId: string): Promise<Reconciliation | undefined>
  }
}

const settling = new Set([
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
])

/** The PaymentIntent an event is about: its object's, or the one its object (a charge, a dispute) belongs to. */
function paymentIntentOf(event: ProviderEvent): string | undefined {
  const object = event.data.object
  if (object.object === 'payment_intent' && typeof object.id === 'string') return object.id
  const intent = object.payment_intent
  if (typeof intent === 'string') return intent
  if (intent && typeof intent === 'object' && 'id' in intent && typeof intent.id === 'string')
    return intent.id
  return undefined
}

export async function receiveProviderEvent(
  deps: ProviderEventsDependencies,
  event: ProviderEvent,
): Promise<ProviderEventOutcome> {
  if (await deps.providerEvents.exists(event.id)) return 'duplicate'
  // a refund at the provider, a chargeback: applied and recorded in one transaction (provider-charge-events.ts)
  if (providerChargeEventTypes.has(event.type)) return receiveProviderChargeEvent(deps, event)
  let outcome: ProviderEventOutcome = 'recorded'
  const key = event.request?.idempotency_key
  if (settling.has(event.type)) {
    // a charge whose answer was lost (the event names its request's key), or a payment that waited for the
    // customer's authentication (their browser confirmed it: no key, the payment's id)
    const intentId = paymentIntentOf(event)
    const settled =
      (key ? await deps.reconciler.reconcileKey(key) : undefined) ??
      (intentId ? await deps.reconciler.settleIntent(intentId) : undefined)
    outcome = settled ? `settled: ${settled.outcome}` : 'nothing to settle'
  }
  const first = await deps.providerEvents.recordOnce({
    eventId: event.id,
    type: event.type,
    paymentIntent: paymentIntentOf(event),
    outcome,
  })
  return first ? outcome : 'duplicate'
}
