// Builds the auth app on a fresh database of its own, as main.ts would, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import type { ServiceApp } from '@meridian/service-kit'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import type { Redis } from 'ioredis'
import { buildApp } from '../src/app.ts'
import { createConfiguredKeyRing } from '../src/authentication.ts'
import { type AuthConfig, loadAuthConfig } from '../src/config.ts'
import type { ManagedKeyRing } from '../src/domain/signing-keys.ts'
import { migrateAuthDatabase } from '../src/migrations.ts'

export type AuthTestApp = ServiceTestApp<AuthConfig, Sql, { app: ServiceApp; keyRing: ManagedKeyRing }>

export interface AuthTestAppOptions {
  /** a key ring of the test's own (e.g. on a test clock), created on the app's database; started by the builder */
  keyRing?: (sql: Sql, config: AuthConfig) => ManagedKeyRing
  /** where the app delivers credential revocations (e.g. through a relay that can suffer an outage) */
  revocationRedis?: Redis
}

export function buildAuthTestApp(
  env: Record<string, string> = {},
  options: AuthTestAppOptions = {},
): Promise<AuthTestApp> {
  return buildServiceTestApp({
    service: 'auth',
    loadConfig: loadAuthConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: 'auth-test' }),
    migrate: (sql) => migrateAuthDatabase(sql),
    async build({ config, sql, redis, logStream, onClose }) {
      const keyRing = options.keyRing?.(sql, config) ?? createConfiguredKeyRing(config, sql)
      await keyRing.start()
      onClose(() => keyRing.stop())
      const { revocationRedis } = options
      return { app: await buildApp({ config, sql, redis, keyRing, logStream, revocationRedis }), keyRing }
    },
  })
}
