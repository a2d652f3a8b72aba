// The outbox and inbox tables, migrated on their own track beside the service's own migrations.
import { fileURLToPath } from 'node:url'
import { type MigrateResult, type MigrationLogger, migrate, type Sql } from '@meridian/db'

export const eventMigrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))

/** Creates or updates the outbox and inbox tables in a service's database (idempotent; safe from many instances). */
export function migrateEventTables(sql: Sql, logger?: MigrationLogger): Promise<MigrateResult> {
  return migrate(sql, {
    dir: eventMigrationsDir,
    table: 'events_schema_migrations',
    ...(logger ? { logger } : {}),
  })
}
