// How auth's database is brought up to date: its own numbered SQL migrations, then the event tables (outbox, inbox)
// of @meridian/events. The one way auth migrates: main.ts, `pnpm migrate`, create-admin, tests and the benchmark.
import { fileURLToPath } from 'node:url'
import type { MigrateResult, MigrationLogger, Sql } from '@meridian/db'
import { migrateServiceDatabase } from '@meridian/events'
import { migrateAuditLog } from '@meridian/service-kit'

export const migrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))

export async function migrateAuthDatabase(sql: Sql, logger?: MigrationLogger): Promise<MigrateResult> {
  // the audit trail's table, on its own track (service-kit's audit-migrations)
  await migrateAuditLog(sql, logger)
  return migrateServiceDatabase(sql, { dir: migrationsDir, ...(logger ? { logger } : {}) })
}
