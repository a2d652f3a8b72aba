// `pnpm migrate`: brings the auth database up to date (scripts/dev runs it before starting the services).
import { createDatabase } from '@meridian/db'
import { loadAuthConfig } from './config.ts'
import { migrateAuthDatabase } from './migrations.ts'

const config = loadAuthConfig()
const sql = createDatabase(config.DATABASE_URL, { max: 1, applicationName: 'auth-migrate' })
try {
  const { applied } = await migrateAuthDatabase(sql)
  process.stdout.write(
    `auth: ${applied.length ? `applied migrations ${applied.join(', ')}` : 'database up to date'}\n`,
  )
} finally {
  await sql.end({ timeout: 5 })
}
