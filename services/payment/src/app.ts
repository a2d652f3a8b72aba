// The payment service as a Fastify app: the chassis with its database, Redis and the event backbone's metrics.
// Products, stock and reservations (routes/, domain/, data/, events/) arrive with their issue. Never listens.
import { databaseErrorMapper, pingDatabase, type Sql } from '@meridian/db'
import { createEventMetrics } from '@meridian/events'
import {
  authOptionsFromEnv,
  authPlugin,
  chassisOptions,
  createServiceApp,
  type LogStream,
  type ServiceApp,
} from '@meridian/service-kit'
import type { Redis } from 'ioredis'
import type { PaymentConfig } from './config.ts'

export const serviceName = 'payment'

// what a process hosting the app needs besides buildApp (main.ts)
export { loadPaymentConfig, type PaymentConfig } from './config.ts'
export { migratePaymentDatabase } from './migrations.ts'

export interface PaymentDependencies {
  config: PaymentConfig
  sql: Sql
  redis: Redis
  /** tests read logs from here; stdout otherwise */
  logStream?: LogStream
}

export async function buildApp({ config, sql, redis, logStream }: PaymentDependencies): Promise<ServiceApp> {
  const app = await createServiceApp({
    ...chassisOptions(config, redis),
    name: serviceName,
    description: 'Payments with Idempotency-Key, the payment provider, refunds',
    ...(logStream ? { logStream } : {}),
    errorMappers: [databaseErrorMapper],
  })
  app.health.add('database', () => pingDatabase(sql))
  app.health.add('redis', async () => {
    await redis.ping()
  })
  // outbox lag, published, consumed, retries and dead letters on /metrics
  createEventMetrics(app.metrics.registry)
  // bearer tokens (auth's JWKS), auth's cookie sessions, and auth's revocations followed at once
  await app.register(authPlugin, authOptionsFromEnv(config, { sessions: { redis }, revocations: { redis } }))
  return app
}
