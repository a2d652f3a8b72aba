// `pnpm migrate`: brings the content database up to date (scripts/dev runs it before starting the services).
import { runMigrateCommand } from '@meridian/db'
import { loadContentConfig } from './config.ts'
import { migrateContentDatabase } from './migrations.ts'

await runMigrateCommand({
  service: 'content',
  databaseUrl: loadContentConfig().DATABASE_URL,
  migrate: migrateContentDatabase,
})
