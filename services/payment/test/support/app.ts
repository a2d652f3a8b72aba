// The payment app on a fresh migrated database of its own, as main.ts builds it, for component tests.
import { createDatabase, type Sql } from '@meridian/db'
import { buildServiceTestApp, type ServiceTestApp } from '@meridian/testkit'
import { buildApp, type PaymentService, serviceName } from '../../src/app.ts'
import { loadPaymentConfig, type PaymentConfig } from '../../src/config.ts'
import { migratePaymentDatabase } from '../../src/migrations.ts'

export type PaymentTestApp = ServiceTestApp<PaymentConfig, Sql, PaymentService>

export function buildPaymentTestApp(env: Record<string, string> = {}): Promise<PaymentTestApp> {
  return buildServiceTestApp({
    service: serviceName,
    loadConfig: loadPaymentConfig,
    env,
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migratePaymentDatabase(sql),
    build: (context) => buildApp(context),
  })
}
