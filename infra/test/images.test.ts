// The system from images, without a container engine: docker-compose.yml's profile `system` declares what
// scripts/images builds and runs as the Dockerfile and the chart expect; the environment file keeps its secrets and
// gives a role and databases of the system's own (on the real PostgreSQL); a container is given only what the run set.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import postgres from 'postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { ensureSystemDatabases, parseEnvFile, systemEnv } from '../src/images/system-env.ts'
import { endpointsOf, planInfra } from '../src/index.ts'
import { repoRoot } from '../src/layout.ts'
import { readManifest } from '../src/manifest/manifest.ts'
import { databaseOfService, databaseUrl } from '../src/probes.ts'
import { containerEnv, imageTag } from '../src/system/spawned-service.ts'

interface ComposeService {
  image?: string
  profiles?: string[]
  network_mode?: string
  read_only?: boolean
  user?: string
  tmpfs?: string[]
  command?: string[]
  stop_grace_period?: string
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }> | string[]
}

const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>
}
const imagesScript = readFileSync(join(repoRoot, 'scripts', 'images'), 'utf8')
const withDatabase = Object.keys(databaseOfService)
const system = [...withDatabase, 'gateway', 'payment-simulator']

/** Each image's port, as scripts/images reads it: from the services' manifest (./scripts/manifest --list). */
function imagePorts(): Record<string, number> {
  return Object.fromEntries(readManifest(repoRoot).map((entry) => [entry.name, entry.port]))
}

/** A service's default PORT as its config.ts declares it (the gateway's in its own schema). */
function configuredPort(name: string): number | undefined {
  const config = readFileSync(join(repoRoot, 'services', name, 'src', 'config.ts'), 'utf8')
  const port =
    /ownStoresEnv\(\{ port: (\d+)/.exec(config) ?? /PORT: Type\.Integer\([^)]*default: (\d+)/.exec(config)
  return port?.[1] ? Number(port[1]) : undefined
}

describe("docker-compose.yml's system", () => {
  it('when read, then the engines have no profile (the optional ones a profile of their own), and the system profile holds every service, its migration and the simulator', () => {
    for (const engine of ['postgres', 'kafka', 'consul', 'redis'])
      expect(compose.services[engine]?.profiles, engine).toBeUndefined()
    expect(compose.services.mailpit?.profiles).toEqual(['mail'])
    expect(compose.services.jaeger?.profiles).toEqual(['observability'])
    const inProfile = Object.entries(compose.services)
      .filter(([, service]) => service.profiles?.includes('system'))
      .map(([name]) => name)
      .sort()
    expect(inProfile).toEqual([...system, ...withDatabase.map((name) => `${name}-migrate`)].sort())
    expect(Object.keys(imagePorts()).sort()).toEqual([...system].sort())
  })

  it("when scripts/images is read, then its images, ports and health paths are the services' manifest's, not a list of its own", () => {
    expect(imagesScript).toContain('infra/src/manifest/main.ts" --list)')
    expect(imagesScript).not.toContain('[gateway]=8080')
    expect(imagesScript).not.toMatch(/^all=\(gateway/m)
  })

  it('when the mailers are read, then auth and notification send mail to the SMTP_URL the environment file gives, and no other service is told of one', () => {
    for (const name of system) {
      const smtp = compose.services[name]?.environment?.SMTP_URL
      if (name === 'auth' || name === 'notification')
        expect(smtp, name).toBe(`\${SMTP_URL:-smtp://localhost:1025}`)
      else expect(smtp, name).toBeUndefined()
    }
  })

  it("when each service is read, then it runs its image of this tree's version as the chart does: host network, read-only, uid 10001, a tmpfs, a drain's grace", () => {
    for (const name of system) {
      const service = compose.services[name]
      expect(service?.image, name).toBe(`meridian/${name}:\${MERIDIAN_TAG:-${imageTag()}}`)
      expect(service, name).toMatchObject({
        network_mode: 'host',
        read_only: true,
        user: '10001:10001',
        tmpfs: ['/tmp'],
        stop_grace_period: '35s',
      })
      expect(service?.environment?.PORT, name).toBe(String(imagePorts()[name]))
      if (name !== 'payment-simulator') expect(imagePorts()[name], name).toBe(configuredPort(name))
    }
    expect(imageTag()).toBe(
      JSON.parse(readFileSync(join(repoRoot, 'services/order/package.json'), 'utf8')).version,
    )
  })

  it('when each migration is read, then it is the same image and configuration running node dist/migrate.js, and its service waits for it to end', () => {
    for (const name of withDatabase) {
      const service = compose.services[name]
      const migrate = compose.services[`${name}-migrate`]
      expect(migrate?.image, name).toBe(service?.image)
      expect(migrate?.command, name).toEqual(['node', 'dist/migrate.js'])
      expect(migrate?.environment, name).toEqual(service?.environment)
      expect(service?.environment?.DATABASE_URL, name).toMatch(/^\$\{[A-Z_]+_DATABASE_URL:-\}$/)
      expect(service?.depends_on, name).toEqual({
        [`${name}-migrate`]: { condition: 'service_completed_successfully' },
      })
    }
  })

  it("when each service's environment is read, then it allows plaintext engines, whose default addresses are the development engines' plaintext ones", () => {
    // production refuses engines reached in plaintext unless allowed, and compose's engines (or scripts/infra's) are
    for (const name of system.filter((each) => each !== 'payment-simulator')) {
      const environment = compose.services[name]?.environment ?? {}
      expect(environment.ENGINES_PLAINTEXT_ALLOWED, name).toBe('true')
      expect(environment, name).toMatchObject({
        KAFKA_BROKERS: `\${KAFKA_BROKERS:-127.0.0.1:9092}`,
        CONSUL_HTTP_ADDR: `\${CONSUL_HTTP_ADDR:-http://127.0.0.1:8500}`,
        REDIS_URL: `\${REDIS_URL:-redis://127.0.0.1:6379}`,
      })
    }
  })

  it('when the environment is read, then no secret has a value in the file and no address is a development default production refuses', () => {
    for (const name of system) {
      const environment = compose.services[name]?.environment ?? {}
      for (const [key, value] of Object.entries(environment)) {
        if (/SECRET|KEYS|CREDENTIAL|DATABASE_URL/.test(key))
          expect(value, `${name} ${key}`).toMatch(/^\$\{\w+:-\}$/)
        expect(value, `${name} ${key}`).not.toContain('127.0.0.1:8080/console')
        expect(value, `${name} ${key}`).not.toContain('127.0.0.1:3099')
      }
    }
  })
})

describe("the system's environment file", () => {
  const server = 'postgres://postgres:postgres@127.0.0.1:5432/postgres'

  it('when written the first time, then every secret is new and long, and the databases are its own on its own role', () => {
    const values = systemEnv(
      server,
      {},
      { KAFKA_BROKERS: '127.0.0.1:9092', SMTP_URL: 'smtp://127.0.0.1:1025', PATH: '/usr/bin' },
    )
    for (const name of ['SERVICE_CREDENTIAL', 'SIGNING_KEY_ENCRYPTION_SECRET', 'OIDC_COOKIE_KEYS'])
      expect(values[name], name).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(values.SERVICE_CREDENTIAL).not.toBe(systemEnv(server, {}).SERVICE_CREDENTIAL)
    expect(values.ORDER_DATABASE_URL).toBe(
      `postgres://meridian_system:${values.MERIDIAN_SYSTEM_DB_PASSWORD}@127.0.0.1:5432/system_orders`,
    )
    expect(values.KAFKA_BROKERS).toBe('127.0.0.1:9092')
    // the services that send mail send it to the Mailpit scripts/infra runs
    expect(values.SMTP_URL).toBe('smtp://127.0.0.1:1025')
    expect(values.PATH).toBeUndefined()
  })

  it('when written again from the file it wrote, then the secrets are the same (the data and the signing keys survive a restart)', () => {
    const first = systemEnv(server, {})
    const text = Object.entries(first)
      .map(([key, value]) => `${key}=${value}`)
      .join('\n')
    expect(systemEnv(server, parseEnvFile(`# a comment\n${text}\n`))).toEqual(first)
  })

  describe('on the real PostgreSQL', () => {
    const suffix = Date.now().toString(36)
    const names = {
      role: `images_test_${suffix}`,
      databaseOf: (database: string) => `images_${suffix}_${database}`,
    }
    let serverUrl = ''

    afterAll(async () => {
      if (!serverUrl) return
      const sql = postgres(serverUrl, { max: 1, onnotice: () => {} })
      for (const database of Object.values(databaseOfService))
        await sql`drop database if exists ${sql(names.databaseOf(database))} with (force)`
      await sql`drop role if exists ${sql(names.role)}`
      await sql.end()
    })

    it('when ensured twice with a new password, then the role logs in with the newest and owns every database; a password that is not base64url is refused', async () => {
      serverUrl = endpointsOf(await planInfra()).databaseUrl
      const password = () => randomBytes(24).toString('base64url')
      await ensureSystemDatabases(serverUrl, password(), names)
      const newest = password()
      await ensureSystemDatabases(serverUrl, newest, names)
      const asRole = new URL(databaseUrl(serverUrl, names.databaseOf('orders')))
      asRole.username = names.role
      asRole.password = newest
      const sql = postgres(asRole.toString(), { max: 1, onnotice: () => {} })
      try {
        const owned = await sql<{ datname: string }[]>`
          select datname from pg_database where pg_get_userbyid(datdba) = ${names.role} order by datname`
        expect(owned.map((row) => row.datname)).toEqual(
          Object.values(databaseOfService).map(names.databaseOf).sort(),
        )
        await sql`create table made_by_the_role (id int)`
      } finally {
        await sql.end()
      }
      await expect(ensureSystemDatabases(serverUrl, "x' superuser --", names)).rejects.toThrow(
        'the system password must be base64url',
      )
    })
  })
})

describe("a container's environment in the images form", () => {
  it("when the run's environment is given, then only what the run set and the engines' (and the trace store's) addresses reach the container", () => {
    const host = {
      PATH: '/usr/bin',
      HOME: '/root',
      NODE_OPTIONS: '--inspect',
      KAFKA_BROKERS: '127.0.0.1:9092',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
    }
    const run = {
      ...host,
      KAFKA_NAMESPACE: 'e2e-x.',
      NODE_ENV: 'production',
      PORT: '3002',
      'lower-case': 'x',
    }
    expect(containerEnv(run, host)).toEqual({
      KAFKA_BROKERS: '127.0.0.1:9092',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      KAFKA_NAMESPACE: 'e2e-x.',
      NODE_ENV: 'production',
      PORT: '3002',
    })
  })

  it("when the host's environment allows plaintext engines too, then the production run's allowance still reaches the container", () => {
    // the image sets no ENGINES_PLAINTEXT_ALLOWED: dropped as "taken unchanged from this process", a production
    // container on the development engines would refuse to start
    const host = { PATH: '/usr/bin', ENGINES_PLAINTEXT_ALLOWED: 'true' }
    expect(containerEnv({ ...host, NODE_ENV: 'production', PORT: '3002' }, host)).toEqual({
      ENGINES_PLAINTEXT_ALLOWED: 'true',
      NODE_ENV: 'production',
      PORT: '3002',
    })
  })

  it('when tracing is configured in the environment, then its OTEL_* variables reach the container like the engines', () => {
    const host = {
      PATH: '/usr/bin',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    }
    expect(containerEnv({ ...host, PORT: '3002' }, host)).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
      PORT: '3002',
    })
  })
})
