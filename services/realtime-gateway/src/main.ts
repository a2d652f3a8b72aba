// realtime-gateway's main: its configuration, migrated database, Redis and app (with its backbone), in Consul.
import { serviceMain } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadRealtimeGatewayConfig } from './config.ts'
import { migrateRealtimeGatewayDatabase } from './migrations.ts'

serviceMain({
  name: serviceName,
  loadConfig: loadRealtimeGatewayConfig,
  migrate: migrateRealtimeGatewayDatabase,
  buildApp,
})
