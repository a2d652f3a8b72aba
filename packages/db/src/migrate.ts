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
  /**
   * also apply `-- meridian: contract` migrations (docs/how-to/releasing.md, "Migrations"): only once every instance runs a
   * release that no longer needs what they remove. Default: the environment's MERIDIAN_MIGRATE_CONTRACT=true (what a
   * service's `pnpm migrate --contract` sets, so every track a service migrates sees the same choice), else false.
   */
  contract?: boolean
  /**
   * how long one migration's statement waits for a table lock before the migration fails (PostgreSQL's lock_timeout,
   * set for each migration's transaction). A DDL statement queued behind a long transaction makes every later query
   * of that table queue behind it; failing fast and retrying later keeps the service answering. Default '10s'.
   */
  lockTimeout?: string
}

export interface MigrateResult {
  /** versions this call applied, in order; empty when the schema was already up to date */
  applied: number[]
  /** contract migrations left pending because the call did not ask for them */
  pendingContract: number[]
}

/** The environment variable `pnpm migrate --contract` sets; read when migrate's `contract` option is not given. */
export const MIGRATE_CONTRACT_ENV = 'MERIDIAN_MIGRATE_CONTRACT'

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
 * Migration files must not manage transactions themselves (no `begin`/`commit`); one that needs a statement refusing a
 * transaction (`create index concurrently`) says `-- meridian: no-transaction`. Contract migrations (`-- meridian:
 * contract`) are applied only with the `contract` option; without it they stay pending and later expand ones still run.
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
      result = await applyPending(session, files, logger, table, {
        contract: options.contract ?? process.env[MIGRATE_CONTRACT_ENV] === 'true',
        lockTimeout: options.lockTimeout ?? '10s',
      })
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
  { contract, lockTimeout }: { contract: boolean; lockTimeout: string },
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
  const pendingContract: number[] = []
  // A contract migration left pending does not hold back the expand migrations after it: they only add, and the code
  // that needs them may already be starting.
  for (const migration of files.filter((file) => !recorded.has(file.version))) {
    if (migration.phase === 'contract' && !contract) {
      pendingContract.push(migration.version)
      continue
    }
    await applyOne(session, migration, table, lockTimeout)
    applied.push(migration.version)
    logger?.info(
      { version: migration.version, file: migration.file, phase: migration.phase },
      'applied migration',
    )
  }
  if (pendingContract.length > 0) {
    logger?.info(
      { versions: pendingContract },
      'contract migrations pending: they run with the contract option once every instance runs this release',
    )
  }
  logger?.info(
    { applied, latest: files.at(-1)?.version ?? null },
    applied.length > 0 ? 'migrations applied' : 'database schema is up to date',
  )
  return { applied, pendingContract }
}

async function applyOne(
  session: postgres.ReservedSql,
  migration: MigrationFile,
  table: string,
  lockTimeout: string,
): Promise<void> {
  if (!migration.transaction) return applyOutsideTransaction(session, migration, table, lockTimeout)
  // A reserved connection has no begin() helper, so the transaction is spelled out.
  await session`begin`
  try {
    // set_config(..., true) is `set local`: the timeout ends with this transaction
    await session`select set_config('lock_timeout', ${lockTimeout}, true)`
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
 * A `-- meridian: no-transaction` migration: its statements one by one, outside any transaction (PostgreSQL runs a
 * multi-statement query as one implicit transaction, which `create index concurrently` refuses), then its row. A
 * failure halfway leaves what ran; the file is written to run again.
 */
async function applyOutsideTransaction(
  session: postgres.ReservedSql,
  migration: MigrationFile,
  table: string,
  lockTimeout: string,
): Promise<void> {
  try {
    await session`select set_config('lock_timeout', ${lockTimeout}, false)`
    for (const statement of splitStatements(migration.sql)) await session.unsafe(statement)
    await session`
      insert into ${session(table)} (version, name, checksum)
      values (${migration.version}, ${migration.name}, ${migration.checksum})`
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new MigrationError(`migration ${migration.file} failed: ${reason}`, {
      file: migration.file,
      cause: error,
    })
  } finally {
    // back to the session's default (the server's or the role's), for whatever the connection runs next
    await session`reset lock_timeout`.catch(() => {})
  }
}

/**
 * A no-transaction migration's statements, split at semicolons that end a line. Such files hold a few plain DDL
 * statements (no functions with bodies, no semicolons inside strings at a line's end); anything richer belongs in a
 * transactional migration.
 */
export function splitStatements(sql: string): string[] {
  const withoutComments = sql
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
  return withoutComments
    .split(/;\s*(?:\n|$)/)
    .map((statement) => statement.trim())
    .filter((statement) => statement.length > 0)
}

/**
 * A package's own migration track beside a service's (the outbox's, the processes', the audit trail's): its folder
 * and the table that records it, migrated as migrate() does (idempotent; safe from many instances).
 */
export function migrationTrack(
  dir: string,
  table: string,
): (sql: Sql, logger?: MigrationLogger) => Promise<MigrateResult> {
  // `contract` stays unset: the track follows the environment's choice, as the service's own folder does
  return (sql, logger) => migrate(sql, { dir, table, ...(logger ? { logger } : {}) })
}
