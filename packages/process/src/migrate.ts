// The process tables, migrated on their own track beside the service's own migrations (as the outbox's are).
import { fileURLToPath } from 'node:url'
import { migrationTrack } from '@meridian/db'

export const processMigrationsDir = fileURLToPath(new URL('../migrations', import.meta.url))

/** Creates or updates process_instances and process_steps (idempotent; safe from many instances). */
export const migrateProcessTables = migrationTrack(processMigrationsDir, 'process_schema_migrations')
