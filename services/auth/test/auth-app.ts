// Builds the auth app on a fresh database of its own, as main.ts would, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import type { ServiceApp } from '@meridian/service-kit'
import { captureLogs, freshDatabase, infraEndpoints, type TestDatabase } from '@meridian/testkit'
import { Redis } from 'ioredis'
import { buildApp } from '../src/app.ts'
import { createConfiguredKeyRing } from '../src/authentication.ts'
import { type AuthConfig, loadAuthConfig } from '../src/config.ts'
import type { ManagedKeyRing } from '../src/domain/signing-keys.ts'
import { migrateAuthDatabase } from '../src/migrations.ts'

export interface AuthTestApp {
  app: ServiceApp
  sql: Sql
  redis: Redis
  keyRing: ManagedKeyRing
  config: AuthConfig
  database: TestDatabase
  logs: Record<string, unknown>[]
  close(): Promise<void>
}

export interface AuthTestAppOptions {
  /** a key ring of the test's own (e.g. on a test clock), created on the app's database; started by the builder */
  keyRing?: (sql: Sql, config: AuthConfig) => ManagedKeyRing
}

export async function buildAuthTestApp(
  env: Record<string, string> = {},
  options: AuthTestAppOptions = {},
): Promise<AuthTestApp> {
  const database = await freshDatabase('auth')
  const sql = createDatabase(database.url, { applicationName: 'auth-test' })
  await migrateAuthDatabase(sql)
  const redis = new Redis(infraEndpoints().redisUrl)
  const { stream: logStream, lines: logs } = captureLogs()
  const config = loadAuthConfig({
    NODE_ENV: 'test',
    PORT: '0',
    DATABASE_URL: database.url,
    REDIS_URL: infraEndpoints().redisUrl,
    CONSUL_HTTP_ADDR: infraEndpoints().consulHttpAddr,
    // each test app counts its own clients: a unique limiter namespace per run
    RATE_LIMIT_MAX: '100000',
    ...env,
  })
  const keyRing = options.keyRing?.(sql, config) ?? createConfiguredKeyRing(config, sql)
  await keyRing.start()
  const app = await buildApp({ config, sql, redis, keyRing, logStream })
  await app.ready()
  return {
    app,
    sql,
    redis,
    keyRing,
    config,
    database,
    logs,
    async close() {
      keyRing.stop()
      await app.close()
      redis.disconnect()
      await sql.end({ timeout: 5 })
      await database.drop()
    },
  }
}
