// How inventory's database is brought up to date: its numbered migrations, then the event tables. The one way it
// migrates: main.ts, `pnpm migrate` and the tests.
import { fileURLToPath } from 'node:url'
import type { MigrateResult, MigrationLogger, Sql } from '@meridian/db'
import { migrateServiceDatabase } from '@meridian/events'

export const migrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))

export function migrateInventoryDatabase(sql: Sql, logger?: MigrationLogger): Promise<MigrateResult> {
  return migrateServiceDatabase(sql, { dir: migrationsDir, ...(logger ? { logger } : {}) })
}
