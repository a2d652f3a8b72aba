// The inventory app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, type InventoryDependencies, type InventoryService, serviceName } from '../../src/app.ts'
import { type InventoryConfig, loadInventoryConfig } from '../../src/config.ts'
import { migrateInventoryDatabase } from '../../src/migrations.ts'

export type InventoryTestApp = ServiceTestApp<InventoryConfig, Sql, InventoryService>

/** `events`: the app's event backbone, for a test of its consumers on topics of its own (none by default). */
export function buildInventoryTestApp(
  env: Record<string, string> = {},
  { events }: Pick<InventoryDependencies, 'events'> = {},
): Promise<InventoryTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadInventoryConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migrateInventoryDatabase(sql),
    build: (context) => buildApp({ ...context, events }),
  })
}
