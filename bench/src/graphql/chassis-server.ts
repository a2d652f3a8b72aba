// bench:graphql's chassis server: the content service's app (buildApp of @meridian/content: the chassis, bearer
// tokens, rate limits in Redis, GraphQL with its cost rule and error formatter, postCreated over Redis pub/sub), hosted
// as content's main.ts hosts it without the event backbone (no relay, no consumers: the bench seeds the users
// projection itself). Started over IPC by main.ts, once per instance; instances of a run share CONTENT_PUBSUB_PREFIX.
import { buildApp } from '@meridian/content'
import { loadContentConfig } from '@meridian/content/config'
import { createDatabase } from '@meridian/db'
import { createRedis } from '@meridian/service-kit'
import { serveOverIpc } from '../servers/serve-over-ipc.ts'
import { readServerEnv } from '../servers/server-env.ts'

await serveOverIpc(async () => {
  const env = readServerEnv()
  const config = loadContentConfig({
    ...process.env,
    NODE_ENV: 'production',
    // the bench's engines are the development ones, plaintext on this machine's loopback
    ENGINES_PLAINTEXT_ALLOWED: 'true',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    DATABASE_POOL_MAX: String(env.poolMax),
    CONSUL_REGISTER: 'false',
    // far above anything a run sends: the limiter's work is measured, never a 429
    RATE_LIMIT_MAX: '1000000000',
    // JWT_ALGORITHM=HS256, JWT_SECRET, JWT_ISSUER, JWT_AUDIENCE and CONTENT_PUBSUB_PREFIX come from main.ts
  })
  const sql = createDatabase(config.DATABASE_URL, {
    max: config.DATABASE_POOL_MAX,
    applicationName: 'bench-graphql-chassis',
  })
  // the client content's main.ts creates, with this run's key prefix (the rate limiter's counters)
  const redis = createRedis(config.REDIS_URL, {
    connectionName: 'bench-graphql-chassis',
    keyPrefix: env.redisKeyPrefix,
  })
  const { app, clients } = await buildApp({ config, sql, redis })
  await app.listen({ host: config.HOST, port: config.PORT })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('the content app is not listening on TCP')
  return {
    port: address.port,
    async close() {
      await app.close()
      // auth's discovery and its connections (content's own clients: ServiceClient has three shapes)
      for (const client of clients) {
        if ('stop' in client) await client.stop()
        else if ('disconnect' in client) await client.disconnect()
        else await client.end({ timeout: 5 })
      }
      await redis.quit()
      await sql.end({ timeout: 5 })
    },
  }
})
