// The shipping app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, type ShippingDependencies, type ShippingService, serviceName } from '../../src/app.ts'
import { loadShippingConfig, type ShippingConfig } from '../../src/config.ts'
import { migrateShippingDatabase } from '../../src/migrations.ts'

export type ShippingTestApp = ServiceTestApp<ShippingConfig, Sql, ShippingService>

/** `events`: the app's event backbone, for a test of its consumers on topics of its own (none by default). */
export function buildShippingTestApp(
  env: Record<string, string> = {},
  { events }: Pick<ShippingDependencies, 'events'> = {},
): Promise<ShippingTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadShippingConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migrateShippingDatabase(sql),
    build: (context) => buildApp({ ...context, events }),
  })
}
