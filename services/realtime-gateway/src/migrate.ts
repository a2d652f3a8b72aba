// `pnpm migrate`: brings the realtime-gateway database up to date (scripts/dev runs it before starting the services).
import { runMigrateCommand } from '@meridian/db'
import { loadRealtimeGatewayConfig } from './config.ts'
import { migrateRealtimeGatewayDatabase } from './migrations.ts'

await runMigrateCommand({
  service: 'realtime-gateway',
  databaseUrl: loadRealtimeGatewayConfig().DATABASE_URL,
  migrate: migrateRealtimeGatewayDatabase,
})
