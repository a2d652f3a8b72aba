// The shipping app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, type ShippingService, serviceName } from '../../src/app.ts'
import { loadShippingConfig, type ShippingConfig } from '../../src/config.ts'
import { migrateShippingDatabase } from '../../src/migrations.ts'

export type ShippingTestApp = ServiceTestApp<ShippingConfig, Sql, ShippingService>

export function buildShippingTestApp(env: Record<string, string> = {}): Promise<ShippingTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadShippingConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migrateShippingDatabase(sql),
    build: (context) => buildApp(context),
  })
}
