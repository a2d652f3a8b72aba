// `pnpm migrate`: brings the shipping database up to date (scripts/dev runs it before starting the services).
import { runMigrateCommand } from '@meridian/db'
import { loadShippingConfig } from './config.ts'
import { migrateShippingDatabase } from './migrations.ts'

await runMigrateCommand({
  service: 'shipping',
  databaseUrl: loadShippingConfig().DATABASE_URL,
  migrate: migrateShippingDatabase,
})
