// What every service answers from the chassis, checked the same way for each: health, readiness with its checks,
// the OpenAPI document, metrics, the 404 envelope; and its life in Consul (registered and passing, then gone).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consulApi } from './consul.ts'
import { infraEndpoints } from './endpoints.ts'
import { expectErrorEnvelope, type HttpAnswer } from './error-envelope.ts'
import { uniqueName } from './unique-name.ts'

/** The part of a Fastify instance the checks use (`app.inject`). */
export interface InjectableApp {
  inject(options: { method: 'GET'; url: string }): PromiseLike<HttpAnswer & { json(): unknown }>
}

export interface ChassisExpectations {
  /** the service's name, the title of its OpenAPI document */
  name: string
  /** the checks /health/ready must run and pass, e.g. ['database', 'redis'] */
  readiness: readonly string[]
  /** public paths the gateway sends here whose routes are still to come: each is the service's own 404 envelope */
  notYetServed?: readonly string[]
}

/** /health, /health/ready, /docs/json, /metrics and the 404 envelope, as every service answers them. */
export async function expectChassisAnswers(app: InjectableApp, expected: ChassisExpectations): Promise<void> {
  const everyCheckOk = Object.fromEntries(expected.readiness.map((name) => [name, 'ok']))
  const health = await app.inject({ method: 'GET', url: '/health' })
  expect(health.statusCode).toBe(200)
  expect(health.json()).toMatchObject({ status: 'ok', checks: everyCheckOk })

  const ready = await app.inject({ method: 'GET', url: '/health/ready' })
  expect(ready.statusCode).toBe(200)
  expect(ready.json()).toMatchObject({ status: 'ready' })
  expect((ready.json() as { checks?: unknown }).checks).toEqual(everyCheckOk)

  const docs = await app.inject({ method: 'GET', url: '/docs/json' })
  expect(docs.statusCode).toBe(200)
  expect(docs.json()).toMatchObject({
    openapi: expect.stringMatching(/^3\./),
    info: { title: expected.name },
  })

  const counters = await app.inject({ method: 'GET', url: '/metrics?format=json' })
  expect(counters.statusCode).toBe(200)
  expect(counters.json()).toMatchObject({ totalConnections: expect.any(Number) })
  const scraped = await app.inject({ method: 'GET', url: '/metrics?format=prometheus' })
  expect(scraped.statusCode).toBe(200)
  expect(String(scraped.headers['content-type'])).toMatch(/^text\/plain/)
  // the event backbone's metrics are there too: every service has an outbox
  expect(scraped.body).toContain('events_dead_lettered_total')

  for (const path of expected.notYetServed ?? []) {
    const answer = await app.inject({ method: 'GET', url: path })
    expectErrorEnvelope(answer, 404, 'NOT_FOUND')
  }
}

interface ConsulCheck {
  Type: string
  Status: string
  ServiceID: string
}

/** The checks Consul holds for instance `id` of `service` (an empty list once it deregistered). */
export async function consulChecksOf(service: string, id: string): Promise<ConsulCheck[]> {
  const { baseUrl, headers } = consulApi()
  const answer = await fetch(`${baseUrl}/v1/health/checks/${encodeURIComponent(service)}`, { headers })
  const checks = (await answer.json()) as ConsulCheck[]
  return checks.filter((check) => check.ServiceID === id)
}

/**
 * A started instance is in Consul with its TTL heartbeat and HTTP check both passing; once stopped it is gone.
 * `start` starts the app as main.ts would (startService) with the given registration timing.
 */
export async function expectConsulLifecycle(
  service: string,
  running: { registration?: { id: string }; stop(): Promise<void> },
): Promise<void> {
  const id = running.registration?.id
  if (!id) throw new Error(`${service} was started without registering in Consul`)
  await expect
    .poll(
      async () => (await consulChecksOf(service, id)).map((check) => `${check.Type}:${check.Status}`).sort(),
      {
        timeout: 15_000,
      },
    )
    .toEqual(['http:passing', 'ttl:passing'])
  await running.stop()
  expect(await consulChecksOf(service, id)).toEqual([])
}

/** What describeServiceChassis needs of a service: its test app builder, migrate function, config and the kit's start. */
export interface ServiceChassisSuite<
  Built extends { app: InjectableApp & { service: { name: string } }; sql: Pool; close(): Promise<void> },
  Pool,
  Config,
> {
  /** the service's name (Consul, OpenAPI title) */
  service: string
  /** the service's test app builder (buildServiceTestApp of this package, composed in its test/support) */
  build(): Promise<Built>
  /** the service's one migrate function */
  migrate(sql: Pool): Promise<{ applied: readonly unknown[] }>
  /** the service's configuration loader */
  loadConfig(env: Record<string, string>): Config
  /** startService of @meridian/service-kit */
  startService(options: {
    app: Built['app']
    config: Config
    registrationTiming: { heartbeatIntervalMs: number; ttl: string }
  }): Promise<{ registration?: { id: string }; stop(): Promise<void> }>
  /** public paths the gateway sends here whose routes are still to come */
  notYetServed?: readonly string[]
  /** the checks /health/ready runs; default database and Redis */
  readiness?: readonly string[]
}

/**
 * The tests every service runs first, the same for each: what the chassis answers (health, readiness, OpenAPI,
 * metrics, its own 404 envelope on the public paths not yet served), its migrated database (outbox and inbox,
 * migrating again changes nothing), and its life in Consul (registered and passing with its TTL heartbeat, gone once
 * stopped).
 */
export function describeServiceChassis<
  Built extends { app: InjectableApp & { service: { name: string } }; sql: Pool; close(): Promise<void> },
  Pool,
  Config,
>(suite: ServiceChassisSuite<Built, Pool, Config>): void {
  describe(`${suite.service}: the chassis`, () => {
    let built: Built
    beforeAll(async () => {
      built = await suite.build()
    })
    afterAll(async () => {
      await built?.close()
    })

    it('when asked, then it answers health, readiness, its OpenAPI document and metrics; its public paths not yet served are its own 404 envelope', async () => {
      await expectChassisAnswers(built.app, {
        name: suite.service,
        readiness: suite.readiness ?? ['database', 'redis'],
        notYetServed: suite.notYetServed ?? [],
      })
    })

    it('when migrated, then its database holds the outbox and inbox tables, and migrating again changes nothing', async () => {
      const sql = built.sql as unknown as (strings: TemplateStringsArray) => Promise<{ name: string }[]>
      const tables =
        await sql`select table_name as name from information_schema.tables where table_schema = 'public'`
      expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining(['outbox', 'inbox']))
      expect((await suite.migrate(built.sql)).applied).toEqual([])
    })

    it('when started, then it is a passing instance in Consul (TTL heartbeat and HTTP check); when stopped, then it leaves', async () => {
      const instance = await suite.build()
      // a name of its own keeps this instance apart from any other of the service in the same agent
      instance.app.service.name = uniqueName(suite.service)
      const running = await suite.startService({
        app: instance.app,
        config: suite.loadConfig({
          NODE_ENV: 'test',
          PORT: '0',
          HOST: '127.0.0.1',
          SERVICE_HOST: '127.0.0.1',
          CONSUL_HTTP_ADDR: infraEndpoints().consulHttpAddr,
        }),
        registrationTiming: { heartbeatIntervalMs: 300, ttl: '5s' },
      })
      try {
        await expectConsulLifecycle(instance.app.service.name, running)
      } finally {
        await running.stop()
        await instance.close()
      }
    })
  })
}
