// The auth service as a Fastify app: chassis, database, users resource. Never listens; main.ts and tests build it.
import {
  isDatabaseError,
  isDatabaseUnavailable,
  mapDatabaseError,
  pingDatabase,
  type Sql,
} from '@meridian/db'
import { createEventMetrics } from '@meridian/events'
import {
  createServiceApp,
  type LogStream,
  registerVersionedApi,
  type ServiceApp,
} from '@meridian/service-kit'
import type { Redis } from 'ioredis'
import type { AuthConfig } from './config.ts'
import { createUsersRepository } from './data/users-repository.ts'
import { createUserUseCases } from './domain/users.ts'
import { usersRoutes } from './routes/users/index.ts'

export const serviceName = 'auth'

export interface AuthDependencies {
  config: AuthConfig
  sql: Sql
  redis: Redis
  /** tests read logs from here; stdout otherwise */
  logStream?: LogStream
}

export async function buildApp({ config, sql, redis, logStream }: AuthDependencies): Promise<ServiceApp> {
  const app = await createServiceApp({
    name: serviceName,
    version: config.SERVICE_VERSION,
    description: 'Identity: users, passwords, tokens, sessions, OAuth 2.0 / OpenID Connect, API keys',
    environment: config.NODE_ENV,
    logLevel: config.LOG_LEVEL,
    ...(logStream ? { logStream } : {}),
    rateLimit: { redis, max: config.RATE_LIMIT_MAX, timeWindowMs: config.RATE_LIMIT_WINDOW_MS },
    errorMappers: [
      (error) =>
        isDatabaseError(error) || isDatabaseUnavailable(error) ? mapDatabaseError(error) : undefined,
    ],
  })

  app.health.add('database', () => pingDatabase(sql))
  app.health.add('redis', async () => {
    await redis.ping()
  })

  // outbox lag, published, consumed, retries and dead letters on this service's /metrics
  createEventMetrics(app.metrics.registry)

  const users = createUserUseCases(createUsersRepository(sql), sql)
  await registerVersionedApi(app, usersRoutes, { users })
  return app
}
