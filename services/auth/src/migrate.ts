// `pnpm migrate`: brings the auth database up to date (scripts/dev runs it before starting the services).
import { runMigrateCommand } from '@meridian/db'
import { loadAuthConfig } from './config.ts'
import { migrateAuthDatabase } from './migrations.ts'

await runMigrateCommand({
  service: 'auth',
  databaseUrl: loadAuthConfig().DATABASE_URL,
  migrate: migrateAuthDatabase,
})
