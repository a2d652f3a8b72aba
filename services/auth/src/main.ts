// The auth process: configuration, database (migrated), Redis, the app, Consul registration, graceful shutdown.
import { createDatabase, migrate } from '@meridian/db'
import { ConfigError, runService } from '@meridian/service-kit'
import { Redis } from 'ioredis'
import { buildApp } from './app.ts'
import { loadAuthConfig } from './config.ts'
import { migrationsDir } from './migrations.ts'

async function main(): Promise<void> {
  const config = loadAuthConfig()
  const sql = createDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, applicationName: 'auth' })
  const redis = new Redis(config.REDIS_URL, { lazyConnect: false })
  const app = await buildApp({ config, sql, redis })
  app.addHook('onClose', async () => {
    await sql.end({ timeout: 5 })
    redis.disconnect()
  })
  // safe with several instances starting together: migrations run under a lock
  await migrate(sql, { dir: migrationsDir, logger: app.log })
  await runService({ app, config })
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`auth: ${error.message}\n`)
  } else {
    process.stderr.write(
      `auth: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    )
  }
  process.exitCode = 1
})
