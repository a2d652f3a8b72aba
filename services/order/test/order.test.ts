// The order service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { expectChassisAnswers, expectConsulLifecycle, infraEndpoints, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadOrderConfig } from '../src/config.ts'
import { buildOrderTestApp, type OrderTestApp } from './support/app.ts'

describe('order', () => {
  let order: OrderTestApp
  beforeAll(async () => {
    order = await buildOrderTestApp()
  })
  afterAll(async () => {
    await order?.close()
  })

  it('when asked, then it answers health, readiness with its database and Redis, its OpenAPI document and metrics; its public paths not yet served are its own 404 envelope', async () => {
    await expectChassisAnswers(order.app, {
      name: 'order',
      readiness: ['database', 'redis'],
      notYetServed: [
        '/api/v1/orders',
        '/orders/7f1c1f0e-8a40-4c1e-9f3a-2b1f0c0d9e11',
        '/users/7f1c1f0e-8a40-4c1e-9f3a-2b1f0c0d9e11/orders',
        '/api/orders',
      ],
    })
  })

  it('when migrated, then its database holds the outbox and inbox tables, and migrating again changes nothing', async () => {
    const tables = await order.sql<{ name: string }[]>`
      select table_name as name from information_schema.tables where table_schema = 'public' order by 1`
    expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining(['outbox', 'inbox']))
    const { migrateOrderDatabase } = await import('../src/migrations.ts')
    expect((await migrateOrderDatabase(order.sql)).applied).toEqual([])
  })

  it('when started, then it is a passing instance in Consul (TTL heartbeat and HTTP check); when stopped, then it leaves', async () => {
    const app = await buildOrderTestApp()
    app.app.service.name = uniqueName('order')
    const running = await startService({
      app: app.app,
      config: loadOrderConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        SERVICE_HOST: '127.0.0.1',
        CONSUL_HTTP_ADDR: infraEndpoints().consulHttpAddr,
      }),
      registrationTiming: { heartbeatIntervalMs: 300, ttl: '5s' },
    })
    try {
      await expectConsulLifecycle(app.app.service.name, running)
    } finally {
      await running.stop()
      await app.close()
    }
  })
})
