// How auth's database is brought up to date: its own numbered SQL migrations, then the event tables (outbox, inbox)
// of @meridian/events. The one way auth migrates: main.ts, `pnpm migrate`, create-admin, tests and the benchmark.
import { fileURLToPath } from 'node:url'
import type { MigrateResult, MigrationLogger, Sql } from '@meridian/db'
import { migrateServiceDatabase } from '@meridian/events'

export const migrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))

export function migrateAuthDatabase(sql: Sql, logger?: MigrationLogger): Promise<MigrateResult> {
  return migrateServiceDatabase(sql, { dir: migrationsDir, ...(logger ? { logger } : {}) })
}
