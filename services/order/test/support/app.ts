// The order app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import type { ServiceApp } from '@meridian/service-kit'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, serviceName } from '../../src/app.ts'
import { loadOrderConfig, type OrderConfig } from '../../src/config.ts'
import { migrateOrderDatabase } from '../../src/migrations.ts'

export type OrderTestApp = ServiceTestApp<OrderConfig, Sql, { app: ServiceApp }>

export function buildOrderTestApp(env: Record<string, string> = {}): Promise<OrderTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadOrderConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migrateOrderDatabase(sql),
    build: async (context) => ({ app: await buildApp(context) }),
  })
}
