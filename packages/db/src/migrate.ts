// Applies a service's numbered SQL migrations exactly once, even when several instances start together.
import type postgres from 'postgres'
import type { Sql } from './database.ts'
import { MigrationError } from './migration-error.ts'
import { type MigrationFile, readMigrationFiles } from './migration-files.ts'

/**
 * Name of the advisory lock migrate() holds; the key is `hashtext(MIGRATION_LOCK_NAME)`. Advisory locks are scoped to
 * one database, so services on the same server do not wait for each other.
 */
export const MIGRATION_LOCK_NAME = 'meridian:migrations'

export interface MigrationLogger {
  info(obj: object, msg?: string): void
}

export interface MigrateOptions {
  /** folder of `NNNN_snake_name.sql` files */
  dir: string
  /**
   * the table that records this folder's applied versions; a shared package (e.g. @meridian/events) keeps its own
   * track beside the service's. Default `schema_migrations`.
   */
  table?: string
  logger?: MigrationLogger
}

export interface MigrateResult {
  /** versions this call applied, in order; empty when the schema was already up to date */
  applied: number[]
}

interface AppliedMigration {
  version: number
  name: string
  checksum: string
}

/**
 * Brings the database up to date with `dir`: each pending migration runs in its own transaction together with its
 * `schema_migrations` row, so a failing one leaves no trace. Applied migrations whose file changed are rejected before
 * anything runs. A second caller waits for the lock and then finds nothing left to do.
 *
 * Migration files must not manage transactions themselves (no `begin`/`commit`), nor use statements that refuse to
 * run in a transaction (e.g. `create index concurrently`).
 */
export async function migrate(sql: Sql, options: MigrateOptions): Promise<MigrateResult> {
  const files = await readMigrationFiles(options.dir)
  const logger = options.logger
  const table = options.table ?? 'schema_migrations'
  if (!/^[a-z_][a-z0-9_]*$/.test(table))
    throw new MigrationError(`migration table name '${table}' is not a plain identifier`)
  // A session-level advisory lock belongs to one connection; the pool would hand each query any connection.
  const session = await sql.reserve()
  try {
    await lock(session, logger)
    let result: MigrateResult
    try {
      result = await applyPending(session, files, logger, table)
    } catch (error) {
      // The original error matters more; if unlocking fails the connection is gone, and the lock with it.
      await unlock(session).catch(() => {})
      throw error
    }
    await unlock(session)
    return result
  } finally {
    session.release()
  }
}

async function lock(session: postgres.ReservedSql, logger: MigrationLogger | undefined): Promise<void> {
  const [attempt] = await session<{ locked: boolean }[]>`
    select pg_try_advisory_lock(hashtext(${MIGRATION_LOCK_NAME})) as locked`
  if (attempt?.locked) return
  logger?.info({ lock: MIGRATION_LOCK_NAME }, 'waiting for another instance to finish migrating')
  await session`select pg_advisory_lock(hashtext(${MIGRATION_LOCK_NAME}))`
}

async function unlock(session: postgres.ReservedSql): Promise<void> {
  await session`select pg_advisory_unlock(hashtext(${MIGRATION_LOCK_NAME}))`
}

async function applyPending(
  session: postgres.ReservedSql,
  files: MigrationFile[],
  logger: MigrationLogger | undefined,
  table: string,
): Promise<MigrateResult> {
  await session`
    create table if not exists ${session(table)} (
      version integer primary key,
      name text not null,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`
  const rows = await session<AppliedMigration[]>`
    select version, name, checksum from ${session(table)} order by version`
  const recorded = new Map(rows.map((row) => [row.version, row]))

  for (const migration of files) {
    const row = recorded.get(migration.version)
    if (row && row.checksum !== migration.checksum) {
      throw new MigrationError(
        `migration ${migration.file} was changed after it was applied (recorded checksum ${row.checksum}, ` +
          `file checksum ${migration.checksum}); add a new migration instead of editing an applied one`,
        { file: migration.file },
      )
    }
  }
  const inFolder = new Set(files.map((migration) => migration.version))
  const unknown = rows.filter((row) => !inFolder.has(row.version)).map((row) => row.version)
  if (unknown.length > 0) {
    // Normal while an older release runs against a newer schema, so it is reported, not refused.
    logger?.info({ versions: unknown }, 'the database has applied migrations that are not in the folder')
  }

  const applied: number[] = []
  for (const migration of files.filter((file) => !recorded.has(file.version))) {
    await applyOne(session, migration, table)
    applied.push(migration.version)
    logger?.info({ version: migration.version, file: migration.file }, 'applied migration')
  }
  logger?.info(
    { applied, latest: files.at(-1)?.version ?? null },
    applied.length > 0 ? 'migrations applied' : 'database schema is up to date',
  )
  return { applied }
}

async function applyOne(
  session: postgres.ReservedSql,
  migration: MigrationFile,
  table: string,
): Promise<void> {
  // A reserved connection has no begin() helper, so the transaction is spelled out.
  await session`begin`
  try {
    // No parameters: the simple query protocol runs every statement of the file.
    await session.unsafe(migration.sql)
    await session`
      insert into ${session(table)} (version, name, checksum)
      values (${migration.version}, ${migration.name}, ${migration.checksum})`
    await session`commit`
  } catch (error) {
    await session`rollback`.catch(() => {})
    const reason = error instanceof Error ? error.message : String(error)
    throw new MigrationError(`migration ${migration.file} failed: ${reason}`, {
      file: migration.file,
      cause: error,
    })
  }
}

/**
 * A package's own migration track beside a service's (the outbox's, the processes', the audit trail's): its folder
 * and the table that records it, migrated as migrate() does (idempotent; safe from many instances).
 */
export function migrationTrack(
  dir: string,
  table: string,
): (sql: Sql, logger?: MigrationLogger) => Promise<MigrateResult> {
  return (sql, logger) => migrate(sql, { dir, table, ...(logger ? { logger } : {}) })
}
