// The realtime-gateway service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { expectChassisAnswers, expectConsulLifecycle, infraEndpoints, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadRealtimeGatewayConfig } from '../src/config.ts'
import { buildRealtimeGatewayTestApp, type RealtimeGatewayTestApp } from './support/app.ts'

describe('realtime-gateway', () => {
  let realtimeGateway: RealtimeGatewayTestApp
  beforeAll(async () => {
    realtimeGateway = await buildRealtimeGatewayTestApp()
  })
  afterAll(async () => {
    await realtimeGateway?.close()
  })

  it('when asked, then it answers health, readiness with its database and Redis, its OpenAPI document and metrics; its public paths not yet served are its own 404 envelope', async () => {
    await expectChassisAnswers(realtimeGateway.app, {
      name: 'realtime-gateway',
      readiness: ['database', 'redis'],
      notYetServed: ['/api/v1/chat/rooms', '/api/v1/documents', '/api/chat/rooms'],
    })
  })

  it('when migrated, then its database holds the outbox and inbox tables, and migrating again changes nothing', async () => {
    const tables = await realtimeGateway.sql<{ name: string }[]>`
      select table_name as name from information_schema.tables where table_schema = 'public' order by 1`
    expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining(['outbox', 'inbox']))
    const { migrateRealtimeGatewayDatabase } = await import('../src/migrations.ts')
    expect((await migrateRealtimeGatewayDatabase(realtimeGateway.sql)).applied).toEqual([])
  })

  it('when started, then it is a passing instance in Consul (TTL heartbeat and HTTP check); when stopped, then it leaves', async () => {
    const app = await buildRealtimeGatewayTestApp()
    app.app.service.name = uniqueName('realtime-gateway')
    const running = await startService({
      app: app.app,
      config: loadRealtimeGatewayConfig({
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
