import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import {
  databaseOfService,
  databaseVariableOf,
  endpointsOf,
  infraEnv,
  pinnedJaegerVersion,
  pinnedMailpitVersion,
  planInfra,
  planMail,
  planTraceStore,
  serviceDatabases,
} from '../src/index.ts'
import { mailpitFlags } from '../src/native/mailpit.ts'

const everyEndpoint = {
  DATABASE_URL: 'postgres://u:p@db.internal:5432/postgres',
  KAFKA_BROKERS: 'k1:9092,k2:9092',
  CONSUL_HTTP_ADDR: 'consul.internal:8500',
  REDIS_URL: 'redis://cache.internal:6379',
}

/** The `<SERVICE>_DATABASE_URL` lines env prints for the server of everyEndpoint. */
const serviceLines = Object.entries(databaseOfService).map(
  ([service, database]) =>
    `export ${databaseVariableOf(service)}='postgres://u:p@db.internal:5432/${database}'`,
)

describe('infrastructure plan', () => {
  it('when every endpoint is given in the environment, then each engine is used as it is and nothing is started', async () => {
    const plan = await planInfra({ ...everyEndpoint })
    expect(plan.map((p) => [p.name, p.mode, p.endpoint])).toEqual([
      ['postgres', 'external', everyEndpoint.DATABASE_URL],
      ['kafka', 'external', everyEndpoint.KAFKA_BROKERS],
      ['consul', 'external', everyEndpoint.CONSUL_HTTP_ADDR],
      ['redis', 'external', everyEndpoint.REDIS_URL],
    ])
  })

  it('when only some endpoints are given and native mode is asked for, then the others are native on the fixed ports', async () => {
    const plan = await planInfra({ REDIS_URL: 'redis://elsewhere:6380', MERIDIAN_INFRA: 'native' })
    expect(Object.fromEntries(plan.map((p) => [p.name, `${p.mode} ${p.endpoint}`]))).toEqual({
      postgres: 'native postgres://postgres:postgres@127.0.0.1:5432/postgres',
      kafka: 'native 127.0.0.1:9092',
      consul: 'native http://127.0.0.1:8500',
      redis: 'external redis://elsewhere:6380',
    })
  })

  it('when MERIDIAN_INFRA names no known mode, then planning fails with the accepted values', async () => {
    await expect(planInfra({ MERIDIAN_INFRA: 'kubernetes' })).rejects.toThrow(/auto, docker or native/)
  })

  it('when env is printed, then each service has its own database on the server, none of them postgres', async () => {
    const lines = (await infraEnv({ ...everyEndpoint })).trimEnd().split('\n')
    const own: Record<string, string> = Object.fromEntries(
      lines.flatMap((line) => {
        const match = /^export ([A-Z_]+)_DATABASE_URL='(.*)'$/.exec(line)
        return match ? [[match[1] as string, match[2] as string]] : []
      }),
    )
    expect(own).toEqual({
      AUTH: 'postgres://u:p@db.internal:5432/auth',
      ORDER: 'postgres://u:p@db.internal:5432/orders',
      PAYMENT: 'postgres://u:p@db.internal:5432/payments',
      INVENTORY: 'postgres://u:p@db.internal:5432/inventory',
      SHIPPING: 'postgres://u:p@db.internal:5432/shipping',
      NOTIFICATION: 'postgres://u:p@db.internal:5432/notifications',
      REALTIME_GATEWAY: 'postgres://u:p@db.internal:5432/realtime',
      CONTENT: 'postgres://u:p@db.internal:5432/content',
    })
    // one database per service (docs/explanation/architecture.md), all different, each created by `infra up`
    expect(new Set(Object.values(own)).size).toBe(serviceDatabases.length)
    expect(
      Object.values(own)
        .map((url) => new URL(url).pathname.slice(1))
        .sort(),
    ).toEqual([...serviceDatabases].sort())
  })

  it('when a service is started by its dev or migrate script, then it reads only its own <SERVICE>_DATABASE_URL, never the server URL', () => {
    for (const service of Object.keys(databaseOfService)) {
      const manifest = JSON.parse(
        readFileSync(new URL(`../../services/${service}/package.json`, import.meta.url), 'utf8'),
      ) as { scripts: Record<string, string> }
      for (const script of ['dev', 'migrate']) {
        const command = manifest.scripts[script] ?? ''
        expect(command, `${service} ${script}`).toContain(`DATABASE_URL=\${${databaseVariableOf(service)}:?`)
        // no fallback to the server's URL: that is the one `postgres` database every service would share
        expect(command, `${service} ${script}`).not.toMatch(/:-\$DATABASE_URL|:-\$\{DATABASE_URL/)
      }
    }
  })

  it('when a Consul token is configured, then env prints it beside the four endpoints', async () => {
    // a cache folder no Jaeger was started from: env prints no OTLP endpoint
    const env = {
      ...everyEndpoint,
      CONSUL_HTTP_TOKEN: 'secret-token',
      MERIDIAN_INFRA: 'native',
      MERIDIAN_CACHE_DIR: mkdtempSync(join(tmpdir(), 'meridian-plan-')),
    }
    expect(endpointsOf(await planInfra(env), env).consulToken).toBe('secret-token')
    expect(await infraEnv(env)).toBe(
      [
        `export DATABASE_URL='${everyEndpoint.DATABASE_URL}'`,
        ...serviceLines,
        `export KAFKA_BROKERS='${everyEndpoint.KAFKA_BROKERS}'`,
        `export CONSUL_HTTP_ADDR='${everyEndpoint.CONSUL_HTTP_ADDR}'`,
        `export REDIS_URL='${everyEndpoint.REDIS_URL}'`,
        "export CONSUL_HTTP_TOKEN='secret-token'",
        '',
      ].join('\n'),
    )
  })

  it('when OTEL_EXPORTER_OTLP_ENDPOINT is given, then the trace store is that endpoint and env prints it after the four', async () => {
    // a cache folder no Mailpit was started from: env prints no SMTP_URL after it
    const env = {
      ...everyEndpoint,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.internal:4318',
      MERIDIAN_CACHE_DIR: mkdtempSync(join(tmpdir(), 'meridian-plan-')),
    }
    expect(await planTraceStore(env)).toEqual({
      name: 'jaeger',
      mode: 'external',
      endpoint: 'http://collector.internal:4318',
    })
    expect(endpointsOf([await planTraceStore(env)], env).otlpEndpoint).toBe('http://collector.internal:4318')
    const lines = (await infraEnv(env)).trimEnd().split('\n')
    expect(lines.at(-1)).toBe("export OTEL_EXPORTER_OTLP_ENDPOINT='http://collector.internal:4318'")
  })

  it('when no OTLP endpoint is given, then Jaeger is planned on the fixed loopback port in the mode asked for', async () => {
    expect(await planTraceStore({ MERIDIAN_INFRA: 'native' })).toEqual({
      name: 'jaeger',
      mode: 'native',
      endpoint: 'http://127.0.0.1:4318',
    })
  })

  it('when SMTP_URL is given, then mail goes there and env prints it (with MAILPIT_URL only when that is given too)', async () => {
    const env = {
      ...everyEndpoint,
      SMTP_URL: 'smtp://mail.internal:587',
      MERIDIAN_CACHE_DIR: mkdtempSync(join(tmpdir(), 'meridian-plan-')),
    }
    expect(await planMail(env)).toEqual({
      name: 'mailpit',
      mode: 'external',
      endpoint: 'smtp://mail.internal:587',
    })
    expect(endpointsOf([await planMail(env)], env)).toMatchObject({ smtpUrl: 'smtp://mail.internal:587' })
    expect(endpointsOf([await planMail(env)], env).mailpitUrl).toBeUndefined()
    expect((await infraEnv(env)).trimEnd().split('\n').at(-1)).toBe(
      "export SMTP_URL='smtp://mail.internal:587'",
    )

    const withApi = { ...env, MAILPIT_URL: 'http://mail.internal:8025' }
    expect((await infraEnv(withApi)).trimEnd().split('\n').slice(-2)).toEqual([
      "export SMTP_URL='smtp://mail.internal:587'",
      "export MAILPIT_URL='http://mail.internal:8025'",
    ])
  })

  it('when no SMTP server is given, then Mailpit is planned on the fixed loopback ports, and env prints nothing of it while it is not running', async () => {
    const env = {
      MERIDIAN_INFRA: 'native',
      MERIDIAN_CACHE_DIR: mkdtempSync(join(tmpdir(), 'meridian-plan-')),
    }
    const plan = await planMail(env)
    expect(plan).toEqual({ name: 'mailpit', mode: 'native', endpoint: 'smtp://127.0.0.1:1025' })
    expect(endpointsOf([plan], env)).toMatchObject({
      smtpUrl: 'smtp://127.0.0.1:1025',
      mailpitUrl: 'http://127.0.0.1:8025',
    })
    expect(await infraEnv({ ...everyEndpoint, ...env })).not.toMatch(/SMTP_URL|MAILPIT_URL/)
  })

  it('when Mailpit runs from docker-compose.yml, then it is the version infra/mailpit builds, with the same flags, on loopback', () => {
    const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8')) as {
      services: Record<string, { image: string; profiles?: string[]; command: string[]; ports: string[] }>
    }
    const mailpit = compose.services.mailpit
    expect(mailpit?.image).toBe(`axllent/mailpit:${pinnedMailpitVersion()}`)
    // optional, as the trace store: started by naming it (the services' mails wait while it is not there)
    expect(mailpit?.profiles).toEqual(['mail'])
    expect(mailpit?.command).toEqual(mailpitFlags)
    expect(mailpit?.ports).toEqual(['127.0.0.1:1025:1025', '127.0.0.1:8025:8025'])
  })

  it('when Jaeger runs from docker-compose.yml, then it is the release infra/jaeger builds, with the same configuration, on loopback', () => {
    const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8')) as {
      services: Record<string, { image: string; profiles?: string[]; volumes: string[]; ports: string[] }>
    }
    const jaeger = compose.services.jaeger
    expect(jaeger?.image).toBe(`jaegertracing/jaeger:${pinnedJaegerVersion().release.slice(1)}`)
    // outside the engines every test setup starts: only `up` of the trace store names it
    expect(jaeger?.profiles).toEqual(['observability'])
    expect(jaeger?.volumes).toEqual(['./infra/jaeger/config.yaml:/etc/jaeger/config.yaml:ro'])
    expect(jaeger?.ports.every((port) => port.startsWith('127.0.0.1:'))).toBe(true)
  })
})
