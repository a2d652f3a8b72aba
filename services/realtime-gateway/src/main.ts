// The realtime-gateway process: its configuration, migrated database, Redis and app (with its backbone), in Consul.
import { runServiceProcess } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadRealtimeGatewayConfig } from './config.ts'
import { migrateRealtimeGatewayDatabase } from './migrations.ts'

runServiceProcess({
  name: serviceName,
  loadConfig: loadRealtimeGatewayConfig,
  migrate: migrateRealtimeGatewayDatabase,
  buildApp,
})
