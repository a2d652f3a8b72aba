// The auth process: configuration, database (migrated), Redis, the outbox relay, the app, Consul, graceful shutdown.
import { createDatabase } from '@meridian/db'
import { createEventMetrics, createEventProducer, createKafka, createOutboxRelay } from '@meridian/events'
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
  // safe with several instances starting together: migrations run under a lock
  await migrateAuthDatabase(sql, app.log)
  // loads the shared signing keys (the first instance creates one) and checks for rotation every minute
  await keyRing.start()

  // user.registered leaves through the outbox: one relay per database is active, the others stand by
  const producer = await createEventProducer(createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'auth' }))
  const relay = createOutboxRelay({
    sql,
    producer,
    logger: app.log,
    metrics: createEventMetrics(app.metrics.registry),
  })
  // onClose hooks run in the order they were added: the relay stops before the pool it uses closes
  app.addHook('onClose', async () => {
    keyRing.stop()
    await relay.stop()
    await producer.disconnect()
    await sql.end({ timeout: 5 })
    redis.disconnect()
  })
  await relay.start()
  await runService({ app, config })
}

runMain('auth', main)
