// The content process: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { runServiceProcess } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadContentConfig } from './config.ts'
import { migrateContentDatabase } from './migrations.ts'

runServiceProcess({
  name: serviceName,
  loadConfig: loadContentConfig,
  migrate: migrateContentDatabase,
  buildApp,
})
