// The content app on a fresh migrated database of its own, as main.ts builds it, for component tests: its
// subscriptions on a Redis channel prefix of its own (unless a test shares one between instances), and every SQL
// statement it sends counted.
import { randomUUID } from 'node:crypto'
import { createDatabase, type Sql } from '@meridian/db'
import { buildServiceTestApp, captureLogs, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, type ContentDependencies, type ContentService, serviceName } from '../../src/app.ts'
import { type ContentConfig, loadContentConfig } from '../../src/config.ts'
import { migrateContentDatabase } from '../../src/migrations.ts'

/** The statements the app's pool sent since the last reset. */
export interface StatementLog {
  statements: string[]
  reset(): void
}

export type ContentTestApp = ServiceTestApp<ContentConfig, Sql, ContentService & { sent: StatementLog }>

/** `events`: the app's event backbone, for a test of its consumers (none by default). */
export function buildContentTestApp(
  env: Record<string, string> = {},
  { events }: Pick<ContentDependencies, 'events'> = {},
): Promise<ContentTestApp> {
  const sent: StatementLog = {
    statements: [],
    reset() {
      sent.statements.length = 0
    },
  }
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadContentConfig,
    env: { CONTENT_PUBSUB_PREFIX: `test:${randomUUID()}:`, ...env },
    connect: (url) =>
      createDatabase(url, {
        applicationName: `${serviceName}-test`,
        onQuery: (query) => sent.statements.push(query),
      }),
    migrate: (sql) => migrateContentDatabase(sql),
    build: async (context) => ({ ...(await buildApp({ ...context, ...(events ? { events } : {}) })), sent }),
  })
}

/**
 * A second instance of `first`'s service: the same database, Redis and configuration (so the same pub/sub channel
 * prefix), its own app, server and subscription connections — as a second process would be.
 */
export async function secondInstance(first: ContentTestApp): Promise<ContentService> {
  const { stream: logStream } = captureLogs()
  const second = await buildApp({ config: first.config, sql: first.sql, redis: first.redis, logStream })
  await second.app.ready()
  return second
}
