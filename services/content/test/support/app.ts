// The content app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import type { ServiceApp } from '@meridian/service-kit'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, serviceName } from '../../src/app.ts'
import { type ContentConfig, loadContentConfig } from '../../src/config.ts'
import { migrateContentDatabase } from '../../src/migrations.ts'

export type ContentTestApp = ServiceTestApp<ContentConfig, Sql, { app: ServiceApp }>

export function buildContentTestApp(env: Record<string, string> = {}): Promise<ContentTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadContentConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migrateContentDatabase(sql),
    build: async (context) => ({ app: await buildApp(context) }),
  })
}
