// The notification app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import type { ServiceApp } from '@meridian/service-kit'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, serviceName } from '../../src/app.ts'
import { loadNotificationConfig, type NotificationConfig } from '../../src/config.ts'
import { migrateNotificationDatabase } from '../../src/migrations.ts'

export type NotificationTestApp = ServiceTestApp<NotificationConfig, Sql, { app: ServiceApp }>

export function buildNotificationTestApp(env: Record<string, string> = {}): Promise<NotificationTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadNotificationConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migrateNotificationDatabase(sql),
    build: async (context) => ({ app: await buildApp(context) }),
  })
}
