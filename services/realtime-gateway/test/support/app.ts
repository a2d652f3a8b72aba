// The realtime-gateway app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, type RealtimeGatewayService, serviceName } from '../../src/app.ts'
import { loadRealtimeGatewayConfig, type RealtimeGatewayConfig } from '../../src/config.ts'
import { migrateRealtimeGatewayDatabase } from '../../src/migrations.ts'

export type RealtimeGatewayTestApp = ServiceTestApp<RealtimeGatewayConfig, Sql, RealtimeGatewayService>

export function buildRealtimeGatewayTestApp(
  env: Record<string, string> = {},
): Promise<RealtimeGatewayTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadRealtimeGatewayConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migrateRealtimeGatewayDatabase(sql),
    build: async (context) => {
      const built = await buildApp(context)
      // as runService does: the notification client and its discovery
      context.onClose(async () => {
        for (const client of built.clients) if ('stop' in client) await client.stop()
      })
      return built
    },
  })
}
