// The notification process: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { runServiceProcess } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadNotificationConfig } from './config.ts'
import { migrateNotificationDatabase } from './migrations.ts'

runServiceProcess({
  name: serviceName,
  loadConfig: loadNotificationConfig,
  migrate: migrateNotificationDatabase,
  buildApp,
})
