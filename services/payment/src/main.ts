// payment's main: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { serviceMain } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadPaymentConfig } from './config.ts'
import { migratePaymentDatabase } from './migrations.ts'

serviceMain({
  name: serviceName,
  loadConfig: loadPaymentConfig,
  migrate: migratePaymentDatabase,
  buildApp,
})
