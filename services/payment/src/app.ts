// The payment service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; payments of orders under an Idempotency-Key (routes/payments, at /api/v1, /api and the bare
// /payments the gateway forwards unchanged), the provider adapter, the payment use cases its consumers call
// (events/: charges, the saga's refunds and returns' refunds), the orders payment heard of (who may pay each, what is due), and the charge reconciler
// (domain/reconciler.ts) on its clock (the kit's scheduleRounds), which settles the charges whose outcome the
// provider did not tell in time, as the provider's webhooks do (routes/stripe-webhooks, signed). Never listens;
// main.ts and tests build it.
import { createDatabase, type Sql, tracedRepository } from '@meridian/db'
import { type AnyServiceConsumer, registerServiceEvents, type WithServiceEvents } from '@meridian/events'
import {
  createServiceApp,
  registerAuditTrail,
  registerVersionedApi,
  type ServiceApp,
  type ServiceDependencies,
  scheduleRounds,
  serviceAppOptions,
} from '@meridian/service-kit'
import { Counter } from 'prom-client'
import { createPaymentProvider, type PaymentProvider } from './clients/payment-provider.ts'
import type { PaymentConfig } from './config.ts'
import { createChargeAttemptsRepository } from './data/charge-attempts-repository.ts'
import { createIdempotencyKeysRepository } from './data/idempotency-keys-repository.ts'
import { createKeyedRefundsRepository } from './data/keyed-refunds-repository.ts'
import { createOrdersRepository } from './data/orders-repository.ts'
import { createPaymentsRepository } from './data/payments-repository.ts'
import { createProviderEventsRepository } from './data/provider-events-repository.ts'
import { paymentFingerprints } from './domain/idempotency.ts'
import { createPaymentUseCases, type PaymentUseCases } from './domain/payments.ts'
import { type ProviderEvent, receiveProviderEvent } from './domain/provider-events.ts'
import { type ChargeReconciler, createChargeReconciler } from './domain/reconciler.ts'
import { type PaymentEventType, paymentConsumers } from './events/consumers.ts'
import { paymentsGuards } from './routes/payments/access.ts'
import { type PaymentsRoutesOptions, paymentsRoutes } from './routes/payments/index.ts'
import { stripeWebhookRoutes } from './routes/stripe-webhooks/index.ts'

export const serviceName = 'payment'

/**
 * Connections of the pool for the writes outside a charge's transaction: single statements on the order's rows, which
 * only the holder of the order's lock writes, so they never wait for a waiter and two serve any number of
 * transactions; beside DATABASE_POOL_MAX.
 */
const autonomousConnections = 2

/**
 * How long a statement of that pool may wait for a lock: never, by design (see above), so a wait means some
 * transaction wrote the order's rows before calling it — a deadlock PostgreSQL cannot see, since the transaction
 * waits in this process. It fails instead: the event is retried on its own, the request answered.
 */
const autonomousLockTimeoutMs = 10_000

/** How often expired Idempotency-Keys are removed. */
const idempotencyKeySweepMs = 10 * 60_000

export type PaymentDependencies = ServiceDependencies<PaymentConfig, Sql> &
  WithServiceEvents<PaymentEventType>

/** The app and its consumers (run by its backbone when asked for), built from one set of repositories and use cases. */
export interface PaymentService {
  app: ServiceApp
  /**
   * what the backbone runs: order.placed and payment.requested charge, payment.refund_requested refunds (the order,
   * or a return's lines)
   */
  consumers: AnyServiceConsumer[]
  payments: PaymentUseCases
  /** settles the charges whose outcome was unknown; its clock runs from ready to close */
  reconciler: ChargeReconciler
  provider: PaymentProvider
}

export async function buildApp(dependencies: PaymentDependencies): Promise<PaymentService> {
  const { config, sql } = dependencies
  const app = await createServiceApp(
    serviceAppOptions(dependencies, {
      name: serviceName,
      description:
        "Payments with Idempotency-Key, the payment provider, refunds (compensations and returns' lines)",
    }),
  )

  // the writes that outlive a transaction holding an order's lock, on connections of their own (order-step.ts'
  // OrderStepDependencies.autonomous); added before the backbone and the clocks, so closed after them
  const autonomous = createDatabase(config.DATABASE_URL, {
    max: autonomousConnections,
    idleInTransactionTimeoutMs: config.DATABASE_IDLE_TRANSACTION_TIMEOUT_MS,
    lockTimeoutMs: autonomousLockTimeoutMs,
    applicationName: `${serviceName}-autonomous`,
  })
  app.addHook('onClose', () => autonomous.end({ timeout: 5 }))

  const provider = createPaymentProvider({
    secretKey: config.STRIPE_SECRET_KEY,
    ...(config.STRIPE_API_BASE === undefined ? {} : { apiBase: config.STRIPE_API_BASE }),
    timeoutMs: config.PAYMENT_PROVIDER_TIMEOUT_MS,
    ...(config.PAYMENT_RETURN_URL === undefined ? {} : { returnUrl: config.PAYMENT_RETURN_URL }),
  })
  app.addHook('onClose', () => provider.close())
  const idempotencyKeys = tracedRepository('idempotency_keys', createIdempotencyKeysRepository(sql))
  // expired keys are taken over when used again; this only keeps the table small
  scheduleRounds(app, {
    name: 'idempotency key sweep',
    intervalMs: idempotencyKeySweepMs,
    round: () => idempotencyKeys.removeExpired(),
    describe: (removed) => (removed > 0 ? { removed } : undefined),
  })
  const paymentsRepository = tracedRepository('payments', createPaymentsRepository(sql))
  const orders = tracedRepository('orders', createOrdersRepository(sql))
  const chargeAttempts = tracedRepository('charge_attempts', createChargeAttemptsRepository(sql))
  const keyedRefunds = tracedRepository('keyed_refunds', createKeyedRefundsRepository(sql))
  const payments = createPaymentUseCases({
    sql,
    payments: paymentsRepository,
    orders,
    chargeAttempts,
    keyedRefunds,
    idempotencyKeys,
    provider,
    autonomous,
    authenticationTimeoutMs: config.PAYMENT_AUTHENTICATION_TIMEOUT_MS,
    idempotencyKeyTtlSeconds: config.IDEMPOTENCY_KEY_TTL_SECONDS,
    fingerprints: paymentFingerprints(config.IDEMPOTENCY_SECRET),
    // a 'running' key outlives its holder only if the process died mid-request: taken over after a few timeouts
    staleRunningAfterSeconds: Math.max(60, Math.ceil((4 * config.PAYMENT_PROVIDER_TIMEOUT_MS) / 1000)),
  })

  const reconciled = new Counter({
    name: 'meridian_payment_reconciled_total',
    help: 'charges whose outcome was unknown, reconciled at the provider, by outcome',
    labelNames: ['outcome'] as const,
    registers: [app.metrics.registry],
  })
  const reconciler = createChargeReconciler({
    sql,
    payments: paymentsRepository,
    orders,
    chargeAttempts,
    provider,
    authenticationTimeoutMs: config.PAYMENT_AUTHENTICATION_TIMEOUT_MS,
    logger: app.log,
    afterMs: config.PAYMENT_RECONCILE_AFTER_MS,
    counter: reconciled,
  })
  // each order reconciled under its advisory lock, which other payment instances skip
  scheduleRounds(app, {
    name: 'charge reconciliation',
    intervalMs: config.PAYMENT_RECONCILE_INTERVAL_MS,
    round: () => reconciler.reconcile(),
    describe: (results) => (results.length > 0 ? { attempts: results.length } : undefined),
  })

  // also the spec's bare POST /payments, which the gateway forwards unchanged; hidden from the docs (an alias)
  // its audit trail, for admins at /api/v1/admin/audit/<service> (service-kit's audit/)
  await registerAuditTrail(app, { sql, service: serviceName })
  // a card in a request body is taken in development and test only (the simulator's test cards): never in production
  const cards: PaymentsRoutesOptions['cards'] =
    config.NODE_ENV === 'development' || config.NODE_ENV === 'test' ? 'tokenized' : 'refused'
  await registerVersionedApi(
    app,
    paymentsRoutes,
    { payments, guards: paymentsGuards(app), cards },
    { atRoot: true },
  )
  const providerEvents = tracedRepository('provider_events', createProviderEventsRepository(sql))
  await registerVersionedApi(app, stripeWebhookRoutes, {
    webhookSecret: config.STRIPE_WEBHOOK_SECRET,
    receive: (event: ProviderEvent) =>
      receiveProviderEvent(
        { providerEvents, reconciler, sql, payments: paymentsRepository, provider },
        event,
      ),
  })

  const consumers = await registerServiceEvents(app, {
    ...dependencies,
    service: serviceName,
    consumers: (options) => paymentConsumers(payments, options),
  })
  return { app, consumers, payments, reconciler, provider }
}
