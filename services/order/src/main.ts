// The order process: its configuration, migrated database, Redis and app (with its event backbone), in Consul.
import { runServiceProcess } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadOrderConfig } from './config.ts'
import { migrateOrderDatabase } from './migrations.ts'

runServiceProcess({ name: serviceName, loadConfig: loadOrderConfig, migrate: migrateOrderDatabase, buildApp })
