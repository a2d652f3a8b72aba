// The Docker path of the test global setup: the four engines as throwaway containers started with testcontainers,
// from the images of container-images.ts and configured as docker-compose.yml configures them (a test compares them).
// testcontainers is imported only here, and only when containers are started, so the other paths never load it.
import { type ComponentName, freePort, type Progress } from '@meridian/infra'
import type { StartedTestContainer } from 'testcontainers'
import { containerImages } from './container-images.ts'

export interface PublishedPort {
  container: number
  /** a fixed host port; without one Docker maps a free port */
  host?: number
}

export type HealthTest = ['CMD-SHELL', string] | ['CMD', ...string[]]

export interface ContainerDefinition {
  name: ComponentName
  image: string
  /** the container's own hostname (Kafka's controller quorum names it, as the compose service name) */
  hostname?: string
  environment: Record<string, string>
  /** empty: the image's own command */
  command: string[]
  ports: PublishedPort[]
  /** Docker HEALTHCHECK test, in docker-compose.yml's form; the container is ready once it passes */
  healthcheck: HealthTest
  /** also required before the container is ready: GET path on a container port answers a body matching this */
  httpReady?: { path: string; port: number; body: RegExp }
}

/** Where Kafka's client listener is reachable from the tests; the broker must advertise exactly this. */
export interface KafkaListener {
  host: string
  port: number
}

export const postgresCredentials = { user: 'postgres', password: 'postgres', database: 'postgres' } as const

const kafkaControllerPort = 9093

/**
 * Every engine's container. Kafka's client listener listens on the same port inside the container as on the host
 * and advertises host:port, so that clients on the host are sent back to an address they can reach (a randomly mapped
 * port would be unknown to the broker when it starts); at compose's 127.0.0.1:9092 it is compose's service exactly.
 */
export function containerDefinitions(kafka: KafkaListener): Record<ComponentName, ContainerDefinition> {
  return {
    postgres: {
      name: 'postgres',
      image: containerImages.postgres,
      environment: {
        POSTGRES_USER: postgresCredentials.user,
        POSTGRES_PASSWORD: postgresCredentials.password,
        POSTGRES_DB: postgresCredentials.database,
      },
      command: ['postgres', '-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
      ports: [{ container: 5432 }],
      // over TCP, unlike compose's check: the entrypoint's first-run server listens on the unix socket only and
      // would pass it before the real server is up
      healthcheck: ['CMD-SHELL', 'pg_isready -h 127.0.0.1 -U postgres'],
    },
    kafka: {
      name: 'kafka',
      image: containerImages.kafka,
      hostname: 'kafka',
      environment: {
        KAFKA_NODE_ID: '1',
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_CONTROLLER_QUORUM_VOTERS: `1@kafka:${kafkaControllerPort}`,
        KAFKA_LISTENERS: `PLAINTEXT://:${kafka.port},CONTROLLER://:${kafkaControllerPort}`,
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${kafka.host}:${kafka.port}`,
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
        KAFKA_NUM_PARTITIONS: '3',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      },
      command: [],
      ports: [{ container: kafka.port, host: kafka.port }],
      healthcheck: [
        'CMD-SHELL',
        `/opt/kafka/bin/kafka-broker-api-versions.sh --bootstrap-server localhost:${kafka.port} >/dev/null 2>&1`,
      ],
    },
    consul: {
      name: 'consul',
      image: containerImages.consul,
      environment: {},
      command: ['agent', '-dev', '-node=meridian-dev', '-client=0.0.0.0', '-log-level=warn'],
      // the HTTP API only: the tests use no DNS
      ports: [{ container: 8500 }],
      healthcheck: ['CMD-SHELL', 'consul info >/dev/null 2>&1'],
      // services are registered at once, so the agent must have elected itself leader (the body is "ip:port")
      httpReady: { path: '/v1/status/leader', port: 8500, body: /^"[^"]+"$/ },
    },
    redis: {
      name: 'redis',
      image: containerImages.redis,
      environment: {},
      command: ['redis-server', '--save', '', '--appendonly', 'no'],
      ports: [{ container: 6379 }],
      healthcheck: ['CMD', 'redis-cli', 'ping'],
    },
  }
}

/** An address the tests can dial: `localhost` may resolve to ::1 first, where a published port may not answer. */
export function dialableHost(host: string): string {
  return host === 'localhost' ? '127.0.0.1' : host
}

/** The endpoint of an engine in a started container, in the form its environment variable takes. */
export function containerEndpoint(
  definition: ContainerDefinition,
  host: string,
  mappedPort: (containerPort: number) => number,
): string {
  const port = mappedPort(definition.ports[0]?.container ?? 0)
  switch (definition.name) {
    case 'postgres': {
      const { user, password, database } = postgresCredentials
      return `postgres://${user}:${password}@${host}:${port}/${database}`
    }
    case 'kafka':
      return `${host}:${port}`
    case 'consul':
      return `http://${host}:${port}`
    case 'redis':
      return `redis://${host}:${port}`
  }
}

export interface StartedContainers {
  /** endpoint of each started engine */
  endpoints: Partial<Record<ComponentName, string>>
  /** `image at host:port` of each, for the line that says which path ran */
  summary: string[]
  stop(): Promise<void>
}

export interface StartOptions {
  /** the engine the probe found (exported as DOCKER_HOST when unset, so testcontainers uses the same one) */
  dockerHost?: string
  progress: Progress
}

/** Starts the named engines' containers in parallel and waits until each is healthy; on a failure stops them all. */
export async function startContainers(
  names: ComponentName[],
  options: StartOptions,
): Promise<StartedContainers> {
  if (options.dockerHost && !process.env.DOCKER_HOST) process.env.DOCKER_HOST = options.dockerHost
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers')
  const runtime = await getContainerRuntimeClient()
  const host = dialableHost(runtime.info.containerRuntime.host)
  // a port free here is taken to be free on the engine's host too (the same machine, unless DOCKER_HOST is remote)
  const definitions = containerDefinitions({ host, port: await freePort() })
  const started = new Map<ComponentName, StartedTestContainer>()
  const stop = async () => {
    await Promise.allSettled([...started.values()].map((container) => container.stop()))
  }
  const results = await Promise.allSettled(
    names.map(async (name) => {
      const definition = definitions[name]
      options.progress(`${name}: starting ${definition.image}`)
      const startedAt = Date.now()
      const waits = [Wait.forHealthCheck()]
      if (definition.httpReady) {
        const { path, port, body } = definition.httpReady
        waits.push(Wait.forHttp(path, port).forResponsePredicate((text) => body.test(text.trim())))
      }
      let container = new GenericContainer(definition.image)
        .withEnvironment(definition.environment)
        .withExposedPorts(
          ...definition.ports.map(({ container: port, host: hostPort }) =>
            hostPort === undefined ? port : { container: port, host: hostPort },
          ),
        )
        .withHealthCheck({ test: definition.healthcheck, interval: 1000, timeout: 10_000, retries: 180 })
        .withWaitStrategy(Wait.forAll(waits))
        .withStartupTimeout(180_000)
      if (definition.command.length > 0) container = container.withCommand(definition.command)
      if (definition.hostname) container = container.withHostname(definition.hostname)
      try {
        started.set(name, await container.start())
      } catch (error) {
        throw new Error(
          `${name} (${definition.image}): ${error instanceof Error ? error.message : String(error)}`,
        )
      }
      options.progress(
        `${name}: ${definition.image} healthy after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
      )
    }),
  )
  const failures = results.flatMap((result) =>
    result.status === 'rejected'
      ? [result.reason instanceof Error ? result.reason.message : String(result.reason)]
      : [],
  )
  if (failures.length > 0) {
    await stop()
    throw new Error(failures.join('\n'))
  }
  const endpoints: Partial<Record<ComponentName, string>> = {}
  const summary: string[] = []
  for (const name of names) {
    const container = started.get(name)
    if (!container) continue
    const definition = definitions[name]
    const containerHost = dialableHost(container.getHost())
    const endpoint = containerEndpoint(definition, containerHost, (port) => container.getMappedPort(port))
    endpoints[name] = endpoint
    summary.push(
      `${definition.image} at ${containerHost}:${container.getMappedPort(definition.ports[0]?.container ?? 0)}`,
    )
  }
  return { endpoints, summary, stop }
}
