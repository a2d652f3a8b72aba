// What a provider's webhook event is to the payment service, and what applying one came to: the types both the
// payment-intent events (provider-events.ts) and the charge events (provider-charge-events.ts) are written in.

/** A provider's event as the payment service reads it (Stripe's Event: id, type, the object, the request's key). */
export interface ProviderEvent {
  id: string
  type: string
  data: { object: { id?: string; object?: string; payment_intent?: unknown } }
  request?: { id?: string | null; idempotency_key?: string | null } | null
}

export type ProviderEventOutcome =
  /** delivered before: acknowledged, nothing applied again */
  | 'duplicate'
  /** a charge attempt whose outcome was unknown is settled (processed, failed, refunded, settled, pending, …) */
  | `settled: ${string}`
  /** about a charge this service settled already, or did not make */
  | 'nothing to settle'
  /** a type this service keeps without acting on it */
  | 'recorded'
  /** charge.refunded: what the provider's refunds added to the payment's refunded amount (0: counted already) */
  | `refunded at the provider: ${number} cents added`
  /** charge.refunded of a refund Meridian asked for (its answer lost): counted, announced by Meridian's own path */
  | `refunded by Meridian: ${number} cents added`
  /** charge.dispute.created: the payment is marked disputed (payment.disputed), or was already */
  | 'disputed'
  | 'disputed already'
  /** a charge or dispute of no payment this service recorded */
  | 'no such payment'
