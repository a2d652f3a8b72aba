// order's main: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { serviceMain } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadOrderConfig } from './config.ts'
import { migrateOrderDatabase } from './migrations.ts'

serviceMain({ name: serviceName, loadConfig: loadOrderConfig, migrate: migrateOrderDatabase, buildApp })
