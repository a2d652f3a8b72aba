// The run's own database on the real server: created, migrated as auth migrates, seeded, dropped.
import { migrateAuthDatabase } from '@meridian/auth'
import { createRunDatabase } from './run-database.ts'
import { hashPassword } from './servers/argon2id.ts'

/** Seeded users have these emails; everything else was created by a run and is removed by `removeCreatedUsers`. */
const seedEmailPattern = 'seed-%@example.com'

/** A seeded admin (every tenth seed user is one): the list is for admins only, so the runs sign in as this one. */
export const seededAdmin = { email: 'seed-10@example.com', password: 'seeded password 1' }

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
  // auth's tables and the outbox: registering a user appends user.registered in its transaction (no relay runs)
  const { name, url, sql, drop } = await createRunDatabase(serverUrl, 'bench', migrateAuthDatabase)

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

/** Signs the seeded admin in through a server's /login; the Authorization header of the list. */
export async function signIn(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(seededAdmin),
  })
  if (response.status !== 200) throw new Error(`POST /login: ${response.status} ${await response.text()}`)
  const { accessToken } = (await response.json()) as { accessToken: string }
  return `Bearer ${accessToken}`
}
