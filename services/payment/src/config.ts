// The payment service's environment: its own stores, the payment provider it charges through, and the clock of the
// charge reconciler (charges whose outcome the provider did not tell in time).
import {
  developmentOnlyDefault,
  idempotencySecretVariable,
  loadConfig,
  ownStoresEnv,
  serviceEnv,
} from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

export const PaymentEnv = serviceEnv({
  ...ownStoresEnv({ port: 3003, database: 'payments' }),
  PAYMENT_PROVIDER_URL: Type.String({
    pattern: '^https?://',
    // the simulator, which approves its test cards: production must name the real provider
    ...developmentOnlyDefault('http://127.0.0.1:3099'),
    description: "the payment provider's base URL (the simulator in development)",
  }),
  PAYMENT_PROVIDER_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 5000,
    description: 'deadline of one provider call, ms (spec Limits: 5000)',
  }),
  PAYMENT_RECONCILE_INTERVAL_MS: Type.Integer({
    minimum: 100,
    maximum: 3_600_000,
    default: 10_000,
    description: 'how often the charge reconciler settles the charges whose outcome was left unknown, ms',
  }),
  PAYMENT_RECONCILE_AFTER_MS: Type.Integer({
    minimum: 0,
    maximum: 86_400_000,
    default: 15_000,
    description: 'a charge whose outcome is unknown is reconciled once its attempt is this old, ms',
  }),
  IDEMPOTENCY_KEY_TTL_SECONDS: Type.Integer({
    minimum: 60,
    default: 86_400,
    description: 'how long an Idempotency-Key and its stored answer are kept',
  }),
  /** the secret request fingerprints are keyed by (service-kit's idempotencySecretVariable) */
  IDEMPOTENCY_SECRET: idempotencySecretVariable(),
})
export type PaymentConfig = Static<typeof PaymentEnv>

export const loadPaymentConfig = (env: NodeJS.ProcessEnv = process.env): PaymentConfig =>
  loadConfig(PaymentEnv, env)
