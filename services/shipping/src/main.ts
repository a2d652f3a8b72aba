// The shipping process: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { runServiceProcess } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadShippingConfig } from './config.ts'
import { migrateShippingDatabase } from './migrations.ts'

runServiceProcess({
  name: serviceName,
  loadConfig: loadShippingConfig,
  migrate: migrateShippingDatabase,
  buildApp,
})
