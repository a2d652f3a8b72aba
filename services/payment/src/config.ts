// The payment service's environment: its own stores, the payment provider it charges through (Stripe, or the simulator
// in development), and the clock of the charge reconciler (charges whose outcome the provider did not tell in time).
import {
  ConfigError,
  developmentOnlyDefault,
  idempotencySecretVariable,
  loadConfig,
  ownStoresEnv,
  serviceEnv,
} from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

export const PaymentEnv = serviceEnv({
  ...ownStoresEnv({ port: 3003, database: 'payments' }),
  STRIPE_API_BASE: Type.Optional(
    Type.String({
      pattern: '^https?://[^/?#\\s]+/?$',
      maxLength: 300,
      expectation: 'must be an http(s) address with no path, e.g. http://127.0.0.1:3099',
      description:
        "the payment provider's address when it is not Stripe itself: the simulator's in development (the default there), stripe-mock's in tests; unset in production means Stripe, and production refuses the simulator's",
    }),
  ),
  STRIPE_SECRET_KEY: Type.String({
    pattern: '^[rs]k_(test|live)_[0-9A-Za-z_]{8,250}$',
    expectation: 'must be a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_…)',
    // the simulator takes any test key: production must name the account's own
    ...developmentOnlyDefault('sk_test_meridian'),
    description: "the provider's secret key (a Secret)",
  }),
  STRIPE_WEBHOOK_SECRET: Type.String({
    pattern: '^whsec_[0-9A-Za-z_+/=]{8,250}$',
    expectation: 'must be a webhook signing secret (whsec_…)',
    ...developmentOnlyDefault('whsec_meridian_development'),
    description: 'the secret the provider signs its webhooks with (a Secret)',
  }),
  PAYMENT_RETURN_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s]+$',
      maxLength: 2000,
      expectation: 'must be an http(s) address, e.g. https://shop.example/orders',
      description:
        "where the customer's browser is sent back to after authenticating a payment (3-D Secure): the shop's order page. Unset in production, a card that asks for authentication is declined; in development it is the console's orders page",
    }),
  ),
  PAYMENT_AUTHENTICATION_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    maximum: 86_400_000,
    default: 600_000,
    description:
      'how long the customer has to authenticate a payment (3-D Secure), ms: then the payment is cancelled and fails',
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

/** The payment-provider simulator's address: the development default of STRIPE_API_BASE, refused in production. */
export const simulatorApiBase = 'http://127.0.0.1:3099'

/** The console's orders page through the development gateway: the development default of PAYMENT_RETURN_URL. */
export const developmentReturnUrl = 'http://127.0.0.1:8080/console/#/orders'

export function loadPaymentConfig(env: NodeJS.ProcessEnv = process.env): PaymentConfig {
  const config = loadConfig(PaymentEnv, env)
  if (config.NODE_ENV === 'production') {
    if (config.STRIPE_API_BASE !== undefined && new URL(config.STRIPE_API_BASE).origin === simulatorApiBase)
      throw new ConfigError([
        "STRIPE_API_BASE: must not be the simulator's address in production (unset it for Stripe)",
      ])
    return config
  }
  return {
    ...config,
    STRIPE_API_BASE: config.STRIPE_API_BASE ?? simulatorApiBase,
    PAYMENT_RETURN_URL: config.PAYMENT_RETURN_URL ?? developmentReturnUrl,
  }
}
