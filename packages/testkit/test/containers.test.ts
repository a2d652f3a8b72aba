// The Docker path without a Docker engine: the containers agree with docker-compose.yml, the path is chosen as
// docs/explanation/architecture.md orders it, and the probe answers quickly whatever is (not) listening. One suite starts the containers
// for real; it runs only where a Docker engine answers.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server, type ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ComponentName, components, kafkaClient } from '@meridian/infra'
import { Redis } from 'ioredis'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { parse } from 'yaml'
import { containerImages } from '../src/container-images.ts'
import {
  type ContainerDefinition,
  containerDefinitions,
  containerEndpoint,
  dialableHost,
  type StartedContainers,
  startContainers,
} from '../src/containers.ts'
import {
  chooseInfraPath,
  type DockerProbe,
  describeInfraPath,
  probeDocker,
  wantedInfra,
} from '../src/infra-path.ts'
import { scaledMs } from '../src/test-time.ts'

interface ComposeService {
  image: string
  /** the system's services are in the profile `system`; the engines in none, so `docker compose up` is them alone */
  profiles?: string[]
  environment?: Record<string, string | number | boolean>
  command?: string[]
  ports?: string[]
  healthcheck?: { test: string[] }
}

const composeFile = fileURLToPath(new URL('../../../docker-compose.yml', import.meta.url))
// merge: the system's services take their common keys (profiles among them) from YAML merge keys
const compose = parse(readFileSync(composeFile, 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>
}

/** Compose's listener: what containerDefinitions must reproduce exactly. */
const composeKafka = { host: '127.0.0.1', port: 9092 }

function composeService(name: ComponentName): ComposeService {
  const service = compose.services[name]
  if (!service) throw new Error(`docker-compose.yml has no service ${name}`)
  return service
}

/** compose's environment as the container receives it: every value a string */
function composeEnvironment(service: ComposeService): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([key, value]) => [key, String(value)]),
  )
}

/** `[ip:]host:container[/proto]` → { host, container } of each published TCP port */
function composePorts(service: ComposeService): { host: number; container: number }[] {
  return (service.ports ?? [])
    .filter((port) => !port.endsWith('/udp'))
    .map((port) => {
      const parts = port.replace(/\/tcp$/, '').split(':')
      return { host: Number(parts.at(-2)), container: Number(parts.at(-1)) }
    })
}

describe('container definitions agree with docker-compose.yml', () => {
  const ours = containerDefinitions(composeKafka)

  it('when the compose file is read, then its services outside a profile are exactly one per engine', () => {
    const engines = Object.entries(compose.services).filter(([, service]) => !service.profiles)
    expect(engines.map(([name]) => name).sort()).toEqual([...components].sort())
  })

  it.each(components)('when %s is started by either, then both use the same image', (name) => {
    expect(composeService(name).image).toBe(containerImages[name])
    expect(ours[name].image).toBe(containerImages[name])
  })

  it.each(components)('when %s is started, then its environment and command are those of compose', (name) => {
    const service = composeService(name)
    expect(ours[name].environment).toEqual(composeEnvironment(service))
    expect(ours[name].command).toEqual(service.command ?? [])
  })

  it.each(components)('when %s publishes a port, then compose publishes that container port too', (name) => {
    const published = composePorts(composeService(name)).map((port) => port.container)
    for (const port of ours[name].ports) expect(published).toContain(port.container)
  })

  it('when Postgres is configured, then its user, password and database are the ones compose gives', () => {
    const environment = composeEnvironment(composeService('postgres'))
    const endpoint = containerEndpoint(ours.postgres, '127.0.0.1', () => 5432)
    expect(endpoint).toBe(
      `postgres://${environment.POSTGRES_USER}:${environment.POSTGRES_PASSWORD}@127.0.0.1:5432/${environment.POSTGRES_DB}`,
    )
  })

  it('when Kafka is configured, then it is one KRaft node, broker and controller, with topic creation off', () => {
    expect(ours.kafka.environment).toMatchObject({
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@kafka:9093',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
    })
    // the quorum names the container as compose's network names the service
    expect(ours.kafka.hostname).toBe('kafka')
    expect(ours.kafka.ports).toEqual(composePorts(composeService('kafka')))
  })

  it('when Consul is configured, then it is a dev agent whose HTTP API answers outside the container', () => {
    expect(ours.consul.command).toEqual(expect.arrayContaining(['agent', '-dev', '-client=0.0.0.0']))
    expect(ours.consul.ports).toEqual([{ container: 8500 }])
  })

  it.each(['kafka', 'consul', 'redis'] as const)(
    'when %s is checked for health, then it is checked as compose checks it',
    (name) => {
      expect(ours[name].healthcheck).toEqual(composeService(name).healthcheck?.test)
    },
  )

  it("when Postgres is checked for health, then it is compose's check over TCP (not the first-run server's socket)", () => {
    const [kind, command] = composeService('postgres').healthcheck?.test ?? []
    expect(ours.postgres.healthcheck).toEqual([
      kind,
      command?.replace('pg_isready', 'pg_isready -h 127.0.0.1'),
    ])
  })

  it('when Kafka listens on another host port, then only its client listener, what it advertises and its check move there', () => {
    const elsewhere = containerDefinitions({ host: 'docker.example', port: 40123 }).kafka
    const changed = Object.keys(elsewhere.environment).filter(
      (key) => elsewhere.environment[key] !== ours.kafka.environment[key],
    )
    expect(changed.sort()).toEqual(['KAFKA_ADVERTISED_LISTENERS', 'KAFKA_LISTENERS'])
    expect(elsewhere.environment.KAFKA_LISTENERS).toBe('PLAINTEXT://:40123,CONTROLLER://:9093')
    expect(elsewhere.environment.KAFKA_ADVERTISED_LISTENERS).toBe('PLAINTEXT://docker.example:40123')
    expect(elsewhere.ports).toEqual([{ container: 40123, host: 40123 }])
    expect(elsewhere.healthcheck[1]).toContain('--bootstrap-server localhost:40123 ')
  })
})

describe('container endpoints', () => {
  const ours = containerDefinitions(composeKafka)
  const mapped = (port: number) => port + 30000

  it.each([
    ['postgres', 'postgres://postgres:postgres@127.0.0.1:35432/postgres'],
    ['kafka', '127.0.0.1:39092'],
    ['consul', 'http://127.0.0.1:38500'],
    ['redis', 'redis://127.0.0.1:36379'],
  ] as const)(
    'when %s runs in a container, then its endpoint has the form its variable takes',
    (name, endpoint) => {
      expect(containerEndpoint(ours[name] as ContainerDefinition, '127.0.0.1', mapped)).toBe(endpoint)
    },
  )

  it('when the engine is local, then endpoints name 127.0.0.1 rather than localhost (which may be ::1)', () => {
    expect(dialableHost('localhost')).toBe('127.0.0.1')
    expect(dialableHost('docker.example')).toBe('docker.example')
  })
})

describe('path selection', () => {
  const everyEndpoint = {
    DATABASE_URL: 'postgres://u:p@db.internal:5432/postgres',
    KAFKA_BROKERS: 'k1:9092',
    CONSUL_HTTP_ADDR: 'consul.internal:8500',
    REDIS_URL: 'redis://cache.internal:6379',
  }
  const answered: DockerProbe = {
    answered: true,
    host: 'unix:///var/run/docker.sock',
    detail: '/var/run/docker.sock',
  }
  const silent: DockerProbe = {
    answered: false,
    detail: 'DOCKER_HOST is unset and there is no Docker socket',
  }
  const probeAnswering = (answer: DockerProbe) => vi.fn(async () => answer)

  it.each([undefined, 'auto', 'docker', 'native'])(
    'when every endpoint is given (MERIDIAN_INFRA=%s), then the environment is used and Docker is not asked',
    async (wanted) => {
      const probe = probeAnswering(answered)
      const env = wanted ? { ...everyEndpoint, MERIDIAN_INFRA: wanted } : everyEndpoint
      expect(await chooseInfraPath(env, probe)).toMatchObject({ path: 'environment', missing: [] })
      expect(probe).not.toHaveBeenCalled()
    },
  )

  it('when MERIDIAN_INFRA=native, then the native engines are used and Docker is not asked', async () => {
    const probe = probeAnswering(answered)
    expect(await chooseInfraPath({ MERIDIAN_INFRA: 'native' }, probe)).toMatchObject({
      path: 'native',
      missing: components,
    })
    expect(probe).not.toHaveBeenCalled()
  })

  it.each([{}, { MERIDIAN_INFRA: 'auto' }, { MERIDIAN_INFRA: '' }])(
    'when nothing is asked for (%j) and a Docker engine answers, then containers are used',
    async (env) => {
      expect(await chooseInfraPath(env, probeAnswering(answered))).toMatchObject({
        path: 'docker',
        missing: components,
        docker: answered,
      })
    },
  )

  it('when nothing is asked for and no Docker engine answers, then the native engines are used', async () => {
    expect(await chooseInfraPath({}, probeAnswering(silent))).toMatchObject({
      path: 'native',
      reason: 'no Docker engine answered',
    })
  })

  it('when MERIDIAN_INFRA=docker and an engine answers, then containers are used', async () => {
    expect(await chooseInfraPath({ MERIDIAN_INFRA: 'docker' }, probeAnswering(answered))).toMatchObject({
      path: 'docker',
      reason: 'MERIDIAN_INFRA=docker',
    })
  })

  it('when MERIDIAN_INFRA=docker and no engine answers, then setup fails saying so, with what was tried', async () => {
    await expect(chooseInfraPath({ MERIDIAN_INFRA: 'docker' }, probeAnswering(silent))).rejects.toThrow(
      /MERIDIAN_INFRA=docker, but no Docker engine answered \(DOCKER_HOST is unset and there is no Docker socket\)/,
    )
  })

  it('when some endpoints are given, then only the others are started, by whichever path', async () => {
    const env = { REDIS_URL: everyEndpoint.REDIS_URL, KAFKA_BROKERS: everyEndpoint.KAFKA_BROKERS }
    expect((await chooseInfraPath(env, probeAnswering(answered))).missing).toEqual(['postgres', 'consul'])
    expect((await chooseInfraPath(env, probeAnswering(silent))).missing).toEqual(['postgres', 'consul'])
  })

  it('when MERIDIAN_INFRA names no known path, then it fails with the accepted values before asking Docker', async () => {
    const probe = probeAnswering(answered)
    await expect(chooseInfraPath({ MERIDIAN_INFRA: 'podman' }, probe)).rejects.toThrow(
      /auto, docker or native/,
    )
    expect(probe).not.toHaveBeenCalled()
    expect(wantedInfra({})).toBe('auto')
  })

  it('when a path ran, then one line says which, and what it started', async () => {
    expect(describeInfraPath(await chooseInfraPath(everyEndpoint, probeAnswering(silent)))).toBe(
      '[testkit] infrastructure: from the environment (DATABASE_URL, KAFKA_BROKERS, CONSUL_HTTP_ADDR, REDIS_URL)',
    )
    expect(describeInfraPath(await chooseInfraPath({}, probeAnswering(silent)))).toBe(
      '[testkit] infrastructure: native engines (infra/, no Docker engine answered): postgres, kafka, consul, redis',
    )
    const docker = await chooseInfraPath({ REDIS_URL: everyEndpoint.REDIS_URL }, probeAnswering(answered))
    expect(
      describeInfraPath(docker, ['postgres:17 at 127.0.0.1:32768', 'apache/kafka:3.9.2 at 127.0.0.1:41000']),
    ).toBe(
      '[testkit] infrastructure: docker (testcontainers, a Docker engine answered, /var/run/docker.sock): ' +
        'postgres:17 at 127.0.0.1:32768, apache/kafka:3.9.2 at 127.0.0.1:41000; from the environment: REDIS_URL',
    )
  })
})

describe('docker probe', () => {
  let dir: string
  const servers: Server[] = []

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'docker-probe-'))
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
    rmSync(dir, { recursive: true, force: true })
  })

  /** A stand-in engine on a unix socket (or on TCP when no socket is named). */
  async function fakeEngine(answer: (response: ServerResponse) => void, socket?: string): Promise<string> {
    const server = createServer((request, response) => {
      if (request.url === '/_ping') answer(response)
      else response.writeHead(404).end()
    })
    server.on('connection', (connection) => connection.unref())
    servers.push(server)
    await new Promise<void>((resolve) =>
      socket ? server.listen(socket, resolve) : server.listen(0, '127.0.0.1', resolve),
    )
    const address = server.address()
    return typeof address === 'string' ? `unix://${address}` : `tcp://127.0.0.1:${address?.port}`
  }

  // "At once" without a stopwatch: given a budget of ten minutes, past the test's own timeout, a probe that answers
  // at all did not spend it.
  const tenMinutes = 600_000

  it('when DOCKER_HOST is unset and no socket exists, then it answers no at once', async () => {
    const result = await probeDocker({}, { sockets: [join(dir, 'absent.sock')], timeoutMs: tenMinutes })
    expect(result).toMatchObject({
      answered: false,
      detail: 'DOCKER_HOST is unset and there is no Docker socket',
    })
  })

  it('when DOCKER_HOST names a socket that does not exist, then it answers no at once, saying why', async () => {
    const result = await probeDocker(
      { DOCKER_HOST: `unix://${join(dir, 'absent.sock')}` },
      { timeoutMs: tenMinutes },
    )
    expect(result.answered).toBe(false)
    expect(result.detail).toMatch(/ENOENT/)
  })

  it('when an engine answers OK on a local socket, then the probe says so and names it as DOCKER_HOST would', async () => {
    const socket = join(dir, 'docker.sock')
    await fakeEngine((response) => response.end('OK'), socket)
    expect(await probeDocker({}, { sockets: [join(dir, 'absent.sock'), socket] })).toEqual({
      answered: true,
      host: `unix://${socket}`,
      detail: socket,
    })
  })

  it('when DOCKER_HOST is a TCP address where an engine answers, then the probe says so', async () => {
    const host = await fakeEngine((response) => response.end('OK'))
    expect(await probeDocker({ DOCKER_HOST: host })).toMatchObject({ answered: true, host })
  })

  it('when something on the socket answers with an error, then it is not taken for an engine', async () => {
    const socket = join(dir, 'broken.sock')
    await fakeEngine((response) => response.writeHead(500).end('boom'), socket)
    expect(await probeDocker({ DOCKER_HOST: `unix://${socket}` })).toMatchObject({
      answered: false,
      detail: expect.stringMatching(/answered 500 boom/),
    })
  })

  it('when something on the socket never answers, then the probe gives up within its budget', async () => {
    const socket = join(dir, 'silent.sock')
    await fakeEngine(() => {}, socket)
    const result = await probeDocker({ DOCKER_HOST: `unix://${socket}` }, { timeoutMs: 150 })
    expect(result).toMatchObject({
      answered: false,
      detail: expect.stringMatching(/no answer within \d+ ms/),
    })
    // the wait it gave up after is what was left of the budget given, not the default's 300 ms
    expect(Number(/no answer within (\d+) ms/.exec(result.detail)?.[1])).toBeLessThanOrEqual(150)
  })

  it('when DOCKER_HOST uses a scheme the probe cannot ask (ssh://), then it answers no, saying so', async () => {
    expect(await probeDocker({ DOCKER_HOST: 'ssh://user@host' })).toMatchObject({
      answered: false,
      detail: expect.stringMatching(/only unix:\/\/ and tcp:\/\//),
    })
  })
})

// Only where a Docker engine answers (never on machines without one): the containers start and each engine answers.
const docker = await probeDocker()

describe.skipIf(!docker.answered)('containers on a real Docker engine', () => {
  let started: StartedContainers

  beforeAll(async () => {
    started = await startContainers([...components], {
      ...(docker.host ? { dockerHost: docker.host } : {}),
      progress: () => {},
    })
  }, scaledMs(600_000))
  afterAll(async () => {
    await started?.stop()
  }, scaledMs(120_000))

  it('when the containers are up, then each engine answers at its endpoint', async () => {
    const { postgres: databaseUrl, kafka, consul, redis: redisUrl } = started.endpoints
    const sql = postgres(databaseUrl ?? '', { max: 1, onnotice: () => {} })
    try {
      const [row] = await sql<{ server_version: string }[]>`show server_version`
      expect(row?.server_version).toMatch(/^17\./)
    } finally {
      await sql.end({ timeout: 5 })
    }
    const admin = kafkaClient(kafka ?? '').admin()
    await admin.connect()
    try {
      expect((await admin.describeCluster()).brokers).toHaveLength(1)
    } finally {
      await admin.disconnect()
    }
    expect((await (await fetch(`${consul}/v1/status/leader`)).text()).trim()).toMatch(/^"[^"]+"$/)
    const redis = new Redis(redisUrl ?? '', { lazyConnect: true })
    try {
      await redis.connect()
      expect(await redis.ping()).toBe('PONG')
    } finally {
      redis.disconnect()
    }
  })
})
