// Server A: the real auth app (buildApp of @meridian/auth: chassis, rate limits in Redis, authentication, the users
// resource), hosted as auth's main.ts hosts it: a started key ring, the same Redis client.
import { buildApp, createConfiguredKeyRing, loadAuthConfig } from '@meridian/auth'
import { createDatabase } from '@meridian/db'
import { activeTracing, createRedis } from '@meridian/service-kit'
import { serveOverIpc } from './serve-over-ipc.ts'
import { readServerEnv } from './server-env.ts'

await serveOverIpc(async () => {
  const env = readServerEnv()
  const config = loadAuthConfig({
    NODE_ENV: 'production',
    // the bench's engines are the development ones, plaintext on this machine's loopback
    ENGINES_PLAINTEXT_ALLOWED: 'true',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    CONSUL_REGISTER: 'false',
    DATABASE_POOL_MAX: String(env.poolMax),
    // far above anything a run sends: the limiter's work is measured, never a 429
    RATE_LIMIT_MAX: '1000000000',
    // production refuses the development secrets; these are the run's own
    SIGNING_KEY_ENCRYPTION_SECRET: `bench-signing-key-secret-${env.secretSeed}-0123456789abcdef`,
    OIDC_COOKIE_KEYS: `bench-oidc-cookie-key-${env.secretSeed}-0123456789abcdef`,
    OIDC_WEB_CLIENT_SECRET: `bench-web-client-secret-${env.secretSeed}-0123456789abcdef`,
    OIDC_MACHINE_CLIENT_SECRET: `bench-machine-client-secret-${env.secretSeed}-0123456789abcdef`,
    SERVICE_CREDENTIAL: `bench-service-credential-${env.secretSeed}-0123456789abcdef`,
    // and its development redirect addresses: the bench's clients never redirect
    OIDC_SPA_REDIRECT_URIS: 'https://bench.invalid/callback',
    OIDC_WEB_REDIRECT_URIS: 'https://bench.invalid/callback',
  })
  const sql = createDatabase(config.DATABASE_URL, {
    max: config.DATABASE_POOL_MAX,
    applicationName: 'bench-chassis',
  })
  // the client auth's main.ts creates, with this run's key prefix
  const redis = createRedis(config.REDIS_URL, {
    connectionName: 'bench-chassis',
    keyPrefix: env.redisKeyPrefix,
  })
  const keyRing = createConfiguredKeyRing(config, sql)
  await keyRing.start()
  const app = await buildApp({ config, sql, redis, keyRing })
  // with the kit's tracing preload (bench:tracing), spans are exported once the process says whose they are, as a
  // service's main does
  activeTracing()?.identify({ name: 'bench-chassis', version: config.SERVICE_VERSION })
  await app.listen({ host: config.HOST, port: config.PORT })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('the chassis app is not listening on TCP')
  return {
    port: address.port,
    async close() {
      await app.close()
      keyRing.stop()
      await redis.quit()
      await sql.end({ timeout: 5 })
      await activeTracing()?.shutdown(5000)
    },
  }
})
