// shipping's main: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { serviceMain } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadShippingConfig } from './config.ts'
import { migrateShippingDatabase } from './migrations.ts'

serviceMain({
  name: serviceName,
  loadConfig: loadShippingConfig,
  migrate: migrateShippingDatabase,
  buildApp,
})
