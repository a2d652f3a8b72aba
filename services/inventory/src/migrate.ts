// `pnpm migrate`: brings the inventory database up to date (scripts/dev runs it before starting the services).
import { runMigrateCommand } from '@meridian/db'
import { loadInventoryConfig } from './config.ts'
import { migrateInventoryDatabase } from './migrations.ts'

await runMigrateCommand({
  service: 'inventory',
  databaseUrl: loadInventoryConfig().DATABASE_URL,
  migrate: migrateInventoryDatabase,
})
