// `pnpm migrate`: brings the notification database up to date (scripts/dev runs it before starting the services).
import { runMigrateCommand } from '@meridian/db'
import { loadNotificationConfig } from './config.ts'
import { migrateNotificationDatabase } from './migrations.ts'

await runMigrateCommand({
  service: 'notification',
  databaseUrl: loadNotificationConfig().DATABASE_URL,
  migrate: migrateNotificationDatabase,
})
