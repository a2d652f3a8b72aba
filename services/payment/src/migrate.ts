// `pnpm migrate`: brings the payment database up to date (scripts/dev runs it before starting the services).
import { runMigrateCommand } from '@meridian/db'
import { loadPaymentConfig } from './config.ts'
import { migratePaymentDatabase } from './migrations.ts'

await runMigrateCommand({
  service: 'payment',
  databaseUrl: loadPaymentConfig().DATABASE_URL,
  migrate: migratePaymentDatabase,
})
