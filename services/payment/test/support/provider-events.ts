// The provider's webhook events as the payment tests send them: a Stripe Event of the pinned API version about one
// object, with the request (and its idempotency key) that caused it, or none (a customer's action at the provider).
import { randomUUID } from 'node:crypto'

export function providerEvent(
  type: string,
  object: Record<string, unknown>,
  request: { idempotencyKey: string | null } | null = { idempotencyKey: null },
) {
  return {
    id: `evt_${randomUUID().replaceAll('-', '')}`,
    object: 'event',
    api_version: '2026-08-26.dahlia',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    type,
    data: { object },
    request: request
      ? { id: `req_${randomUUID().slice(0, 8)}`, idempotency_key: request.idempotencyKey }
      : { id: null, idempotency_key: null },
  }
}
