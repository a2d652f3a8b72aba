// A service's app for component tests, built as its main.ts builds it: the configuration loaded from a test
// environment that points at the real engines, a fresh database of its own migrated by the service's one migrate
// function, a Redis client, captured logs, and one close() that undoes all of it in order.

import type { Writable } from 'node:stream'
import { redisTlsFromEnv } from '@meridian/infra/secure'
import { Redis } from 'ioredis'
import { freshDatabase, type TestDatabase } from './database.ts'
import { infraEndpoints } from './endpoints.ts'
import { captureLogs } from './logs.ts'
import { testServiceCredential, tokenEnv } from './tokens.ts'

/** What a database pool must offer the builder: postgres.js's `end`. */
export interface ClosablePool {
  end(options: { timeout: number }): Promise<void>
}

/** What the builder hands to `build`: everything main.ts would have made before calling buildApp. */
export interface ServiceTestContext<Config, Pool> {
  config: Config
  sql: Pool
  redis: Redis
  database: TestDatabase
  /** pass it as the app's log stream; what is logged lands in `logs` */
  logStream: Writable
  /** runs at close(), before the app closes (in the order added): stop what `build` started, e.g. a timer */
  onClose(close: () => unknown): void
}

export interface ServiceTestAppOptions<
  Config,
  Pool extends ClosablePool,
  Built extends { app: TestableApp },
> {
  /** the service's name: labels its test database and is the pool's application name */
  service: string
  /** the service's own configuration loader (config.ts), given the test environment */
  loadConfig(env: Record<string, string>): Config
  /**
   * variables of this test on top of the defaults (engines' endpoints, NODE_ENV=test, PORT=0, a high rate limit, the
   * test service credential)
   */
  env?: Record<string, string>
  /** opens the pool as main.ts does (createDatabase of @meridian/db), on the test database's URL */
  connect(url: string): Pool
  /** the service's one migrate function, also used by main.ts and `pnpm migrate` */
  migrate(sql: Pool): Promise<unknown>
  /** builds the app (and anything the test needs beside it) from what main.ts would pass */
  build(context: ServiceTestContext<Config, Pool>): Promise<Built>
}

export interface TestableApp {
  ready(): PromiseLike<unknown>
  close(): PromiseLike<unknown>
}

export type ServiceTestApp<Config, Pool, Built> = Built & {
  config: Config
  sql: Pool
  redis: Redis
  database: TestDatabase
  /** every line the app logged, parsed */
  logs: Record<string, unknown>[]
  /** closes the app, then Redis and the pool, and drops the database */
  close(): Promise<void>
}

/** The environment every service's test app starts from: the engines the global setup found. */
export function serviceTestEnv(): Record<string, string> {
  const endpoints = infraEndpoints()
  return {
    NODE_ENV: 'test',
    PORT: '0',
    REDIS_URL: endpoints.redisUrl,
    KAFKA_BROKERS: endpoints.kafkaBrokers,
    CONSUL_HTTP_ADDR: endpoints.consulHttpAddr,
    ...(endpoints.consulToken ? { CONSUL_HTTP_TOKEN: endpoints.consulToken } : {}),
    // every test app counts its own clients; a test of the limits sets its own
    RATE_LIMIT_MAX: '100000',
    SERVICE_CREDENTIAL: testServiceCredential,
  }
}

/**
 * The environment of another service run as a process of its own beside a test (its main.ts): the engines, its
 * database, registered in Consul under `consulName`, verifying the HS256 test tokens, logging only warnings.
 */
export function serviceProcessEnv({
  databaseUrl,
  consulName,
}: {
  databaseUrl: string
  consulName: string
}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...serviceTestEnv(),
    LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl,
    CONSUL_REGISTER: 'true',
    CONSUL_SERVICE_NAME: consulName,
    ...tokenEnv,
  }
}

/** Builds a service's app on its own migrated database, ready to be injected into or listened on. */
export async function buildServiceTestApp<
  Config,
  Pool extends ClosablePool,
  Built extends { app: TestableApp },
>(options: ServiceTestAppOptions<Config, Pool, Built>): Promise<ServiceTestApp<Config, Pool, Built>> {
  const database = await freshDatabase(options.service)
  const env: Record<string, string> = { ...serviceTestEnv(), DATABASE_URL: database.url, ...options.env }
  const sql = options.connect(database.url)
  // the Redis the test's environment names (a relay in front of the engine, for one), the engine's otherwise; over TLS
  // as the service would be (rediss://, REDIS_TLS_*)
  const redisUrl = env.REDIS_URL ?? infraEndpoints().redisUrl
  const tls = redisTlsFromEnv(redisUrl, env)
  const redis = new Redis(redisUrl, {
    connectionName: `${options.service}-test`,
    ...(tls ? { tls } : {}),
  })
  const closers: (() => unknown)[] = []
  const release = async () => {
    redis.disconnect()
    await sql.end({ timeout: 5 })
    await database.drop()
  }
  try {
    await options.migrate(sql)
    const config = options.loadConfig(env)
    const { stream: logStream, lines: logs } = captureLogs()
    const built = await options.build({
      config,
      sql,
      redis,
      database,
      logStream,
      onClose: (closer) => closers.push(closer),
    })
    await built.app.ready()
    return {
      ...built,
      config,
      sql,
      redis,
      database,
      logs,
      async close() {
        try {
          for (const closer of closers) await closer()
          await built.app.close()
        } finally {
          await release()
        }
      },
    }
  } catch (error) {
    for (const closer of closers) await closer()
    await release()
    throw error
  }
}
