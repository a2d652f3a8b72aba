// The payment process: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { runServiceProcess } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadPaymentConfig } from './config.ts'
import { migratePaymentDatabase } from './migrations.ts'

runServiceProcess({
  name: serviceName,
  loadConfig: loadPaymentConfig,
  migrate: migratePaymentDatabase,
  buildApp,
})
