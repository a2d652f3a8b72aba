// What a service's `pnpm migrate` runs: its one migrate function on a pool of one, a line saying what changed.
import { createDatabase, type Sql } from './database.ts'
import { MIGRATE_CONTRACT_ENV, type MigrateResult } from './migrate.ts'

export interface MigrateCommandOptions {
  service: string
  databaseUrl: string
  /** the service's migrate function, the same main.ts and its tests use */
  migrate(sql: Sql): Promise<MigrateResult>
  /**
   * the command's arguments; `--contract` among them also applies contract migrations, others are ignored (the
   * command also runs inside test runners, whose own arguments it must not refuse). Default: process.argv after the
   * script
   */
  args?: readonly string[]
}

/** Brings the service's database up to date and says so on stdout; the pool is closed whatever happens. */
export async function runMigrateCommand({
  service,
  databaseUrl,
  migrate,
  args = process.argv.slice(2),
}: MigrateCommandOptions): Promise<void> {
  // A service migrates several tracks (its own, the outbox's, the processes'...) through one function: the environment
  // carries the choice to each of them, as migrate() reads it when its option is not given.
  if (args.includes('--contract')) process.env[MIGRATE_CONTRACT_ENV] = 'true'
  const sql = createDatabase(databaseUrl, {
    max: 1,
    applicationName: `${service}-migrate`,
    urlSource: 'DATABASE_URL',
  })
  try {
    const { applied, pendingContract } = await migrate(sql)
    const pending = pendingContract.length
      ? `; contract migrations ${pendingContract.join(', ')} pending (--contract once every instance runs this release)`
      : ''
    process.stdout.write(
      `${service}: ${applied.length ? `applied migrations ${applied.join(', ')}` : 'database up to date'}${pending}\n`,
    )
  } finally {
    await sql.end({ timeout: 5 })
  }
}
