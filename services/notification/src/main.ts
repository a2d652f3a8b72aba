// notification's main: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { serviceMain } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadNotificationConfig } from './config.ts'
import { migrateNotificationDatabase } from './migrations.ts'

serviceMain({
  name: serviceName,
  loadConfig: loadNotificationConfig,
  migrate: migrateNotificationDatabase,
  buildApp,
})
