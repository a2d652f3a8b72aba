// What a service's `pnpm migrate` runs: its one migrate function on a pool of one, a line saying what changed.
import { createDatabase, type Sql } from './database.ts'
import type { MigrateResult } from './migrate.ts'

export interface MigrateCommandOptions {
  service: string
  databaseUrl: string
  /** the service's migrate function, the same main.ts and its tests use */
  migrate(sql: Sql): Promise<MigrateResult>
}

/** Brings the service's database up to date and says so on stdout; the pool is closed whatever happens. */
export async function runMigrateCommand({
  service,
  databaseUrl,
  migrate,
}: MigrateCommandOptions): Promise<void> {
  const sql = createDatabase(databaseUrl, {
    max: 1,
    applicationName: `${service}-migrate`,
    urlSource: 'DATABASE_URL',
  })
  try {
    const { applied } = await migrate(sql)
    process.stdout.write(
      `${service}: ${applied.length ? `applied migrations ${applied.join(', ')}` : 'database up to date'}\n`,
    )
  } finally {
    await sql.end({ timeout: 5 })
  }
}
