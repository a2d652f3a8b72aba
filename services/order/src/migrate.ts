// `pnpm migrate`: brings the order database up to date (scripts/dev runs it before starting the services).
import { runMigrateCommand } from '@meridian/db'
import { loadOrderConfig } from './config.ts'
import { migrateOrderDatabase } from './migrations.ts'

await runMigrateCommand({
  service: 'order',
  databaseUrl: loadOrderConfig().DATABASE_URL,
  migrate: migrateOrderDatabase,
})
