// `pnpm migrate`: brings the auth database up to date (scripts/dev runs it before starting the services).
import { createDatabase, migrate } from '@meridian/db'
import { loadAuthConfig } from './config.ts'
import { migrationsDir } from './migrations.ts'

const config = loadAuthConfig()
const sql = createDatabase(config.DATABASE_URL, { max: 1, applicationName: 'auth-migrate' })
try {
  const { applied } = await migrate(sql, { dir: migrationsDir })
  process.stdout.write(
    `auth: ${applied.length ? `applied migrations ${applied.join(', ')}` : 'database up to date'}\n`,
  )
} finally {
  await sql.end({ timeout: 5 })
}
