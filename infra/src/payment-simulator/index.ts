// The payment provider simulator (@meridian/infra/payment-simulator): in-process for tests, main.ts as a process.
// It speaks a subset of Stripe's API, beside its own health, stats, summary, faults and reset (README.md); these are
// its public names.
export {
  type CardBrand,
  luhnValid,
  type StripeCardBehavior,
  stripeTestCards,
  testPaymentMethods,
} from './cards.ts'
export { apiVersion as stripeApiVersion } from './objects.ts'
export {
  defaultDelayMs,
  defaultHangMs,
  defaultIdempotencyTtlMs,
  defaultPort,
  defaultWebhookRetryDelaysMs,
  defaultWebhookTimeoutMs,
  type LatencyRange,
  optionsFromEnv,
  type PaymentSimulatorOptions,
  type RefundBehavior,
  refundBehaviors,
  type WebhookTarget,
} from './options.ts'
export {
  createPaymentSimulator,
  type OrderSummary,
  type PaymentSimulator,
  type SimulatorFaults,
  type SimulatorStats,
} from './simulator.ts'
export { type EventType as StripeEventType, eventTypes as stripeEventTypes } from './transitions.ts'
export { signature as webhookSignature } from './webhooks.ts'
