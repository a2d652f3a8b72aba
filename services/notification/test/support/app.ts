// The notification app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, type NotificationService, serviceName } from '../../src/app.ts'
import { loadNotificationConfig, type NotificationConfig } from '../../src/config.ts'
import { migrateNotificationDatabase } from '../../src/migrations.ts'

export type NotificationTestApp = ServiceTestApp<NotificationConfig, Sql, NotificationService>

export function buildNotificationTestApp(env: Record<string, string> = {}): Promise<NotificationTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadNotificationConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migrateNotificationDatabase(sql),
    build: (context) => buildApp(context),
  })
}
