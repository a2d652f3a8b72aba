// The order app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, type OrderDependencies, type OrderService, serviceName } from '../../src/app.ts'
import { loadOrderConfig, type OrderConfig } from '../../src/config.ts'
import { migrateOrderDatabase } from '../../src/migrations.ts'

export type OrderTestApp = ServiceTestApp<OrderConfig, Sql, OrderService>

/**
 * `events`: the app's event backbone, for a test of its consumers on topics of its own (none by default);
 * `onQuery`: told each statement the app's pool sends (a test counting them).
 */
export function buildOrderTestApp(
  env: Record<string, string> = {},
  { events, onQuery }: Pick<OrderDependencies, 'events'> & { onQuery?: (query: string) => void } = {},
): Promise<OrderTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadOrderConfig,
    env,
    connect: (url) =>
      createDatabase(url, { applicationName: `${serviceName}-test`, ...(onQuery ? { onQuery } : {}) }),
    migrate: (sql) => migrateOrderDatabase(sql),
    build: async (context) => {
      const built = await buildApp({ ...context, events })
      // as runService does: the inventory client and its discovery (no request is in flight by then)
      context.onClose(async () => {
        for (const client of built.clients) if ('stop' in client) await client.stop()
      })
      return built
    },
  })
}
