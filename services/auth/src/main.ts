// The auth process: configuration, clients, the app (migrated database, signing keys, the event backbone), Consul.
import { createDatabase } from '@meridian/db'
import { createEventMetrics, createKafka, eventsPlugin } from '@meridian/events'
import { createRedis, runMain, runService } from '@meridian/service-kit'
import { buildApp } from './app.ts'
import { createConfiguredKeyRing } from './authentication.ts'
import { loadAuthConfig } from './config.ts'
import { migrateAuthDatabase } from './migrations.ts'

async function main(): Promise<void> {
  const config = loadAuthConfig()
  const sql = createDatabase(config.DATABASE_URL, { max: config.DATABASE_POOL_MAX, applicationName: 'auth' })
  const redis = createRedis(config.REDIS_URL, { connectionName: 'auth' })
  // logs through the app's logger, which exists by the time the key ring starts
  const keyRing = createConfiguredKeyRing(config, sql, {
    info: (details, message) => app.log.info(details, message),
    error: (details, message) => app.log.error(details, message),
  })
  const app = await buildApp({ config, sql, redis, keyRing })
  await migrateAuthDatabase(sql, app.log)
  // loads the shared signing keys (the first instance creates one) and checks for rotation every minute
  await keyRing.start()
  // user.registered leaves through the outbox: one relay per database is active, the others stand by
  await app.register(eventsPlugin, {
    sql,
    kafka: createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'auth' }),
    namespace: config.KAFKA_NAMESPACE,
    metrics: createEventMetrics(app.metrics.registry),
  })
  await runService({ app, config, clients: [keyRing, sql, redis] })
}

runMain('auth', main)
