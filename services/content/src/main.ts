// The content process: configuration, clients, the app (migrated database, the event backbone and its consumers),
// Consul.
import { createDatabase } from '@meridian/db'
import { createEventMetrics, createKafka, eventsPlugin } from '@meridian/events'
import { createRedis, runMain, runService } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadContentConfig } from './config.ts'
import { migrateContentDatabase } from './migrations.ts'

runMain(serviceName, async () => {
  const config = loadContentConfig()
  const sql = createDatabase(config.DATABASE_URL, {
    max: config.DATABASE_POOL_MAX,
    applicationName: serviceName,
  })
  const redis = createRedis(config.REDIS_URL, { connectionName: serviceName })
  const { app, consumers, clients } = await buildApp({ config, sql, redis })
  await migrateContentDatabase(sql, app.log)
  // post.created leaves through the outbox: one relay per database is active, the others stand by
  await app.register(eventsPlugin, {
    sql,
    kafka: createKafka({ brokers: config.KAFKA_BROKERS, clientId: serviceName }),
    namespace: config.KAFKA_NAMESPACE,
    metrics: createEventMetrics(app.metrics.registry),
    consumers,
  })
  await runService({ app, config, clients: [...clients, sql, redis] })
})
