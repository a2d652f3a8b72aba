// How content's database is brought up to date: its numbered migrations, then the event tables. The one way it
// migrates: main.ts, `pnpm migrate` and the tests.
import { fileURLToPath } from 'node:url'
import type { MigrateResult, MigrationLogger, Sql } from '@meridian/db'
import { migrateServiceDatabase } from '@meridian/events'
import { migrateAuditLog } from '@meridian/service-kit'

export const migrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))

export async function migrateContentDatabase(sql: Sql, logger?: MigrationLogger): Promise<MigrateResult> {
  // the audit trail's table, on its own track (service-kit's audit-migrations)
  await migrateAuditLog(sql, logger)
  return migrateServiceDatabase(sql, { dir: migrationsDir, ...(logger ? { logger } : {}) })
}
