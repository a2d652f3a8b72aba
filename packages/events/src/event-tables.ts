// The outbox and inbox tables, migrated on their own track beside the service's own migrations.
import { fileURLToPath } from 'node:url'
import { type MigrateResult, type MigrationLogger, migrate, migrationTrack, type Sql } from '@meridian/db'

export const eventMigrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))

/** Creates or updates the outbox and inbox tables in a service's database (idempotent; safe from many instances). */
export const migrateEventTables = migrationTrack(eventMigrationsDir, 'events_schema_migrations')

/**
 * A service's database brought up to date: its own numbered migrations from `dir`, then the outbox and inbox tables.
 * The one way a service migrates (main.ts, `pnpm migrate`, tests); safe with several instances starting together,
 * each set running under its own advisory lock.
 */
export async function migrateServiceDatabase(
  sql: Sql,
  { dir, logger }: { dir: string; logger?: MigrationLogger },
): Promise<MigrateResult> {
  const own = await migrate(sql, { dir, ...(logger ? { logger } : {}) })
  await migrateEventTables(sql, logger)
  return own
}
