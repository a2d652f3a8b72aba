// The content service as the template builds it: the chassis' answers, its migrated database, its life in Consul.
import { startService } from '@meridian/service-kit'
import { expectChassisAnswers, expectConsulLifecycle, infraEndpoints, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadContentConfig } from '../src/config.ts'
import { buildContentTestApp, type ContentTestApp } from './support/app.ts'

describe('content', () => {
  let content: ContentTestApp
  beforeAll(async () => {
    content = await buildContentTestApp()
  })
  afterAll(async () => {
    await content?.close()
  })

  it('when asked, then it answers health, readiness with its database and Redis, its OpenAPI document and metrics; its public paths not yet served are its own 404 envelope', async () => {
    await expectChassisAnswers(content.app, {
      name: 'content',
      readiness: ['database', 'redis'],
      notYetServed: ['/graphql'],
    })
  })

  it('when migrated, then its database holds the outbox and inbox tables, and migrating again changes nothing', async () => {
    const tables = await content.sql<{ name: string }[]>`
      select table_name as name from information_schema.tables where table_schema = 'public' order by 1`
    expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining(['outbox', 'inbox']))
    const { migrateContentDatabase } = await import('../src/migrations.ts')
    expect((await migrateContentDatabase(content.sql)).applied).toEqual([])
  })

  it('when started, then it is a passing instance in Consul (TTL heartbeat and HTTP check); when stopped, then it leaves', async () => {
    const app = await buildContentTestApp()
    app.app.service.name = uniqueName('content')
    const running = await startService({
      app: app.app,
      config: loadContentConfig({
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
