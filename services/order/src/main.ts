// The order process: configuration, clients, the app (migrated database, the event backbone), Consul.
import { createDatabase } from '@meridian/db'
import { createEventMetrics, createKafka, eventsPlugin } from '@meridian/events'
import { createRedis, runMain, runService } from '@meridian/service-kit'
import { buildApp, serviceName } from './app.ts'
import { loadOrderConfig } from './config.ts'
import { migrateOrderDatabase } from './migrations.ts'

runMain(serviceName, async () => {
  const config = loadOrderConfig()
  const sql = createDatabase(config.DATABASE_URL, {
    max: config.DATABASE_POOL_MAX,
    applicationName: serviceName,
  })
  const redis = createRedis(config.REDIS_URL, { connectionName: serviceName })
  const { app, consumers, clients } = await buildApp({ config, sql, redis })
  await migrateOrderDatabase(sql, app.log)
  await app.register(eventsPlugin, {
    sql,
    kafka: createKafka({ brokers: config.KAFKA_BROKERS, clientId: serviceName }),
    namespace: config.KAFKA_NAMESPACE,
    metrics: createEventMetrics(app.metrics.registry),
    consumers,
  })
  // the inventory client and its discovery close after the app (no request uses them any more), then the stores
  await runService({ app, config, clients: [...clients, sql, redis] })
})
