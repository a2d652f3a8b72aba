// inventory's main: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { serviceMain } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadInventoryConfig } from './config.ts'
import { migrateInventoryDatabase } from './migrations.ts'

serviceMain({
  name: serviceName,
  loadConfig: loadInventoryConfig,
  migrate: migrateInventoryDatabase,
  buildApp,
})
