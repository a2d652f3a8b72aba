// The payment service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; payments under an Idempotency-Key (routes/payments, at /api/v1, /api and the bare /payments
// the gateway forwards unchanged), the provider adapter, and the payment use cases its consumers call (events/).
// Never listens; main.ts and tests build it.
import { chassisDatabase, type Sql } from '@meridian/db'
import { type AnyServiceConsumer, createEventMetrics } from '@meridian/events'
import {
  authOptionsFromEnv,
  chassisOptions,
  createServiceApp,
  registerVersionedApi,
  type ServiceApp,
  type ServiceDependencies,
} from '@meridian/service-kit'
import type { PaymentConfig } from './config.ts'
import { createIdempotencyKeysRepository } from './data/idempotency-keys-repository.ts'
import { createPaymentProvider, type PaymentProvider } from './data/payment-provider.ts'
import { createPaymentsRepository } from './data/payments-repository.ts'
import { createPaymentUseCases, type PaymentUseCases } from './domain/payments.ts'
import { paymentConsumers } from './events/consumers.ts'
import { paymentsGuards } from './routes/payments/access.ts'
import { paymentsRoutes } from './routes/payments/index.ts'

export const serviceName = 'payment'

/** How often expired Idempotency-Keys are removed. */
const idempotencyKeySweepMs = 10 * 60_000

export type PaymentDependencies = ServiceDependencies<PaymentConfig, Sql>

/** The app and what main.ts hands to the event backbone, built from one set of repositories and use cases. */
export interface PaymentService {
  app: ServiceApp
  /** for eventsPlugin: order.placed and payment.requested charge, payment.refund_requested refunds */
  consumers: AnyServiceConsumer[]
  payments: PaymentUseCases
  provider: PaymentProvider
}

export async function buildApp({
  config,
  sql,
  redis,
  logStream,
}: PaymentDependencies): Promise<PaymentService> {
  const app = await createServiceApp({
    ...chassisOptions(config, redis),
    name: serviceName,
    description: 'Payments with Idempotency-Key, the payment provider, refunds',
    database: chassisDatabase(sql),
    // bearer tokens (auth's JWKS) and auth's cookie sessions, with auth's revocations followed at once
    authentication: authOptionsFromEnv(config, { sessions: { redis }, revocations: { redis } }),
    ...(logStream ? { logStream } : {}),
  })
  // outbox lag, published, consumed, retries and dead letters on /metrics
  createEventMetrics(app.metrics.registry)

  const provider = createPaymentProvider({
    baseUrl: config.PAYMENT_PROVIDER_URL,
    timeoutMs: config.PAYMENT_PROVIDER_TIMEOUT_MS,
  })
  app.addHook('onClose', () => provider.close())
  const idempotencyKeys = createIdempotencyKeysRepository(sql)
  // expired keys are taken over when used again; this only keeps the table small
  const sweep = setInterval(() => {
    idempotencyKeys
      .removeExpired()
      .catch((error) => app.log.warn({ err: error }, 'idempotency key sweep failed'))
  }, idempotencyKeySweepMs)
  sweep.unref()
  app.addHook('onClose', () => clearInterval(sweep))
  const payments = createPaymentUseCases({
    sql,
    payments: createPaymentsRepository(sql),
    idempotencyKeys,
    provider,
    idempotencyKeyTtlSeconds: config.IDEMPOTENCY_KEY_TTL_SECONDS,
    // a 'running' key outlives its holder only if the process died mid-request: taken over after a few timeouts
    staleRunningAfterSeconds: Math.max(60, Math.ceil((4 * config.PAYMENT_PROVIDER_TIMEOUT_MS) / 1000)),
  })

  const routesOptions = { payments, guards: paymentsGuards(app) }
  await registerVersionedApi(app, paymentsRoutes, routesOptions)
  // the spec's bare POST /payments, which the gateway forwards unchanged; hidden from the docs (an alias)
  await app.register(async (bare) => {
    bare.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true }
    })
    await bare.register(paymentsRoutes, routesOptions)
  })

  return { app, consumers: paymentConsumers(payments), payments, provider }
}
