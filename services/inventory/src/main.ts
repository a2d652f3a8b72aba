// The inventory process: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { runServiceProcess } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadInventoryConfig } from './config.ts'
import { migrateInventoryDatabase } from './migrations.ts'

runServiceProcess({
  name: serviceName,
  loadConfig: loadInventoryConfig,
  migrate: migrateInventoryDatabase,
  buildApp,
})
