// Server A: the real auth app (buildApp of @meridian/auth: chassis, rate limits in Redis, the users resource).
import { type AuthDependencies, buildApp } from '@meridian/auth'
import { createDatabase } from '@meridian/db'
import { createRedis, loadConfig, ServiceEnv } from '@meridian/service-kit'
import { serveOverIpc } from './serve-over-ipc.ts'
import { readServerEnv } from './server-env.ts'

await serveOverIpc(async () => {
  const env = readServerEnv()
  // @meridian/auth exports neither loadAuthConfig nor AuthEnv: the chassis' own variables, validated by the
  // chassis' loader, plus the one auth adds (DATABASE_POOL_MAX)
  const config: AuthDependencies['config'] = {
    ...loadConfig(ServiceEnv, {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: env.redisUrl,
      CONSUL_REGISTER: 'false',
      // far above anything a run sends: the limiter's Redis round trip is measured, never a 429
      RATE_LIMIT_MAX: '1000000000',
    }),
    DATABASE_POOL_MAX: env.poolMax,
  }
  const sql = createDatabase(config.DATABASE_URL, {
    max: config.DATABASE_POOL_MAX,
    applicationName: 'bench-chassis',
  })
  // the client auth's main.ts creates, with this run's key prefix
  const redis = createRedis(config.REDIS_URL, {
    connectionName: 'bench-chassis',
    keyPrefix: env.redisKeyPrefix,
  })
  const app = await buildApp({ config, sql, redis })
  await app.listen({ host: config.HOST, port: config.PORT })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('the chassis app is not listening on TCP')
  return {
    port: address.port,
    async close() {
      await app.close()
      await redis.quit()
      await sql.end({ timeout: 5 })
    },
  }
})
