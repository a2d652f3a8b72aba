// The payment service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics. Products, stock and reservations (routes/, domain/, data/, events/) arrive with their issue.
// Never listens; main.ts and tests build it.
import { chassisDatabase, type Sql } from '@meridian/db'
import { createEventMetrics } from '@meridian/events'
import {
  authOptionsFromEnv,
  chassisOptions,
  createServiceApp,
  type ServiceApp,
  type ServiceDependencies,
} from '@meridian/service-kit'
import type { PaymentConfig } from './config.ts'

export const serviceName = 'payment'

export type PaymentDependencies = ServiceDependencies<PaymentConfig, Sql>

export async function buildApp({ config, sql, redis, logStream }: PaymentDependencies): Promise<ServiceApp> {
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
  return app
}
