// The run's own database on the real server: created, migrated as auth's main.ts does, seeded, dropped.
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { createDatabase, migrate } from '@meridian/db'
import { migrateEventTables } from '@meridian/events'
import { databaseUrl } from '@meridian/infra'
import { hashPassword } from './servers/argon2id.ts'

/**
 * services/auth/migrations, found next to the package's entry (src/app.ts). @meridian/auth does not export its
 * migrations folder, so this relies on that layout.
 */
export const authMigrationsDir = fileURLToPath(
  new URL('../migrations', import.meta.resolve('@meridian/auth')),
)

/** Seeded users have these emails; everything else was created by a run and is removed by `removeCreatedUsers`. */
const seedEmailPattern = 'seed-%@example.com'

export interface BenchDatabase {
  name: string
  url: string
  /** `count` users with one precomputed argon2id hash, created one minute apart (so the list order is real) */
  seed(count: number): Promise<void>
  /** removes the users POST runs created and their outbox rows, so each server starts from the same tables */
  removeCreatedUsers(): Promise<number>
  drop(): Promise<void>
}

export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `bench_${randomBytes(6).toString('hex')}`
  const admin = createDatabase(serverUrl, { max: 1, applicationName: 'bench-admin' })
  try {
    await admin`create database ${admin(name)}`
  } finally {
    await admin.end({ timeout: 5 })
  }
  const url = databaseUrl(serverUrl, name)
  const sql = createDatabase(url, { max: 2, applicationName: 'bench-setup' })

  let dropped: Promise<void> | undefined
  const drop = () => {
    dropped ??= (async () => {
      await sql.end({ timeout: 5 })
      const dropper = createDatabase(serverUrl, { max: 1, applicationName: 'bench-admin' })
      try {
        await dropper`drop database if exists ${dropper(name)} with (force)`
      } finally {
        await dropper.end({ timeout: 5 })
      }
    })()
    return dropped
  }

  try {
    await migrate(sql, { dir: authMigrationsDir })
    // registering a user appends user.registered to the outbox in the same transaction (no relay runs here)
    await migrateEventTables(sql)
  } catch (error) {
    await drop()
    throw error
  }

  return {
    name,
    url,
    async seed(count) {
      const passwordHash = await hashPassword('seeded password 1')
      await sql`
        insert into users (name, email, password_hash, role, status, age, created_at, updated_at)
        select 'Seed User ' || g, 'seed-' || g || '@example.com', ${passwordHash},
               case when g % 10 = 0 then 'admin' else 'user' end,
               case when g % 7 = 0 then 'inactive' else 'active' end,
               18 + g % 60, now() - make_interval(mins => g), now() - make_interval(mins => g)
        from generate_series(1, ${count}::int) as g`
      await sql`analyze users`
    },
    async removeCreatedUsers() {
      const result = await sql`delete from users where email not like ${seedEmailPattern}`
      await sql`truncate outbox`
      await sql`vacuum analyze users`
      return result.count
    },
    drop,
  }
}
