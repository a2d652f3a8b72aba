// How auth's database is brought up to date: its own numbered SQL migrations, then the event tables (outbox, inbox)
// of @meridian/events. The one way auth migrates: main.ts, `pnpm migrate`, create-admin, tests and the benchmark.
import { fileURLToPath } from 'node:url'
import { type MigrateResult, type MigrationLogger, migrate, type Sql } from '@meridian/db'
import { migrateEventTables } from '@meridian/events'

export const migrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))

/** Safe with several instances starting together: each migration set runs under its own advisory lock. */
export async function migrateAuthDatabase(sql: Sql, logger?: MigrationLogger): Promise<MigrateResult> {
  const own = await migrate(sql, { dir: migrationsDir, ...(logger ? { logger } : {}) })
  await migrateEventTables(sql, logger)
  return own
}
