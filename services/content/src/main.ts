// content's main: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { serviceMain } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadContentConfig } from './config.ts'
import { migrateContentDatabase } from './migrations.ts'

serviceMain({
  name: serviceName,
  loadConfig: loadContentConfig,
  migrate: migrateContentDatabase,
  buildApp,
})
