// The payment app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, type PaymentDependencies, type PaymentService, serviceName } from '../../src/app.ts'
import { loadPaymentConfig, type PaymentConfig } from '../../src/config.ts'
import { migratePaymentDatabase } from '../../src/migrations.ts'

export type PaymentTestApp = ServiceTestApp<PaymentConfig, Sql, PaymentService>

/** `events`: the app's event backbone, for a test of its consumers on topics of its own (none by default). */
export function buildPaymentTestApp(
  env: Record<string, string> = {},
  { events }: Pick<PaymentDependencies, 'events'> = {},
): Promise<PaymentTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadPaymentConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migratePaymentDatabase(sql),
    build: (context) => buildApp({ ...context, events }),
  })
}
