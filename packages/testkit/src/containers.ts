// The Docker path of the test global setup: the four engines as throwaway containers started with testcontainers,
// from the images of container-images.ts and configured as docker-compose.yml configures them (a test compares them).
// With the locally built images (MERIDIAN_ENGINE_IMAGES=local, podman's socket) the containers share the host's network
// and listen on free loopback ports: nothing is published through a bridge, nothing dials a private-range address.
// testcontainers is imported only here, and only when containers are started, so the other paths never load it.
import { type ComponentName, freePort, type Progress } from '@meridian/infra'
import type { StartedTestContainer, WaitStrategy } from 'testcontainers'
import {
  containerImages,
  type EngineImages,
  localEngineImages,
  wantedEngineImages,
} from './container-images.ts'

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
  /**
   * `host`: the container shares the host's network and listens on `ports` itself (host = container port), and is
   * ready once `ready` says so (podman without systemd runs no health checks on its own)
   */
  network?: 'host'
  ready?: { command: string } | { log: RegExp }
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

/** The loopback ports of the locally built engines on the host's network, each free when chosen. */
export interface LocalPorts {
  postgres: number
  kafka: number
  kafkaController: number
  consul: number
  consulServer: number
  consulSerfLan: number
  redis: number
}

export async function freeLocalPorts(): Promise<LocalPorts> {
  const [postgres, kafka, kafkaController, consul, consulServer, consulSerfLan, redis] = await Promise.all(
    Array.from({ length: 7 }, () => freePort()),
  )
  return { postgres, kafka, kafkaController, consul, consulServer, consulSerfLan, redis } as LocalPorts
}

/**
 * The engines from the images scripts/engine-images builds, on the host's network: compose's configuration, plus only
 * what puts each engine on its own loopback ports (the native engines keep 5432, 9092, 8500 and 6379) — a listen
 * address and port, Kafka's controller and Consul's server ports, Consul's DNS, gRPC and WAN ports switched off —
 * and each health check asked on those ports.
 */
export function localContainerDefinitions(ports: LocalPorts): Record<ComponentName, ContainerDefinition> {
  const compose = containerDefinitions({ host: '127.0.0.1', port: ports.kafka })
  const onHost = (port: number): PublishedPort[] => [{ container: port, host: port }]
  const { hostname: _kafkaHost, ...kafka } = compose.kafka
  const consulReady = `consul info -http-addr=http://127.0.0.1:${ports.consul}`
  return {
    postgres: {
      ...compose.postgres,
      image: localEngineImages.postgres,
      command: [
        ...compose.postgres.command,
        '-c',
        `port=${ports.postgres}`,
        '-c',
        'listen_addresses=127.0.0.1',
      ],
      ports: onHost(ports.postgres),
      healthcheck: ['CMD-SHELL', `pg_isready -h 127.0.0.1 -p ${ports.postgres} -U postgres`],
      network: 'host',
      ready: { command: `pg_isready -h 127.0.0.1 -p ${ports.postgres} -U postgres` },
    },
    kafka: {
      ...kafka,
      image: localEngineImages.kafka,
      environment: {
        ...kafka.environment,
        // the quorum names the node by address: on the host's network there is no `kafka` to resolve
        KAFKA_CONTROLLER_QUORUM_VOTERS: `1@127.0.0.1:${ports.kafkaController}`,
        KAFKA_LISTENERS: `PLAINTEXT://127.0.0.1:${ports.kafka},CONTROLLER://127.0.0.1:${ports.kafkaController}`,
        // one suite's broker for a few minutes: the serial collector and the client compiler only (a broker started
        // alone: CPU until started 7.9 -> 4.7 s, then 2.8 -> 1.8 s a minute idle, against G1 with both compilers)
        KAFKA_JVM_PERFORMANCE_OPTS: '-XX:+UseSerialGC -XX:TieredStopAtLevel=1',
      },
      ports: onHost(ports.kafka),
      healthcheck: [
        'CMD-SHELL',
        `/opt/kafka/bin/kafka-broker-api-versions.sh --bootstrap-server 127.0.0.1:${ports.kafka} >/dev/null 2>&1`,
      ],
      network: 'host',
      // the health check starts a JVM; asked every 100 ms while the broker starts it would take a core from it
      ready: { log: /\[KafkaRaftServer nodeId=1\] Kafka Server started/ },
    },
    consul: {
      ...compose.consul,
      image: localEngineImages.consul,
      command: [
        ...compose.consul.command.filter((argument) => !argument.startsWith('-client=')),
        '-client=127.0.0.1',
        '-bind=127.0.0.1',
        `-http-port=${ports.consul}`,
        `-server-port=${ports.consulServer}`,
        `-serf-lan-port=${ports.consulSerfLan}`,
        '-serf-wan-port=-1',
        '-dns-port=-1',
        '-grpc-port=-1',
        '-grpc-tls-port=-1',
      ],
      ports: onHost(ports.consul),
      healthcheck: ['CMD-SHELL', `${consulReady} >/dev/null 2>&1`],
      network: 'host',
      // services are registered at once, so the agent must have elected itself leader
      ready: { command: `${consulReady} | grep -q 'leader = true'` },
    },
    redis: {
      ...compose.redis,
      image: localEngineImages.redis,
      command: [...compose.redis.command, '--port', String(ports.redis), '--bind', '127.0.0.1'],
      ports: onHost(ports.redis),
      healthcheck: ['CMD', 'redis-cli', '-p', String(ports.redis), 'ping'],
      network: 'host',
      ready: { command: `redis-cli -p ${ports.redis} ping | grep -q PONG` },
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
  /** which images; MERIDIAN_ENGINE_IMAGES when not given */
  images?: EngineImages
  progress: Progress
}

type Testcontainers = typeof import('testcontainers')

/** The last lines an engine's container printed: what a start that failed says of its cause. */
class OutputTail {
  readonly #lines: string[] = []
  constructor(private readonly keep = 15) {}
  add(chunk: unknown): void {
    for (const line of String(chunk).split('\n')) {
      if (line.trim() === '') continue
      this.#lines.push(line.length > 300 ? `${line.slice(0, 300)}…` : line)
      if (this.#lines.length > this.keep) this.#lines.shift()
    }
  }
  toString(): string {
    return this.#lines.length === 0 ? '' : `\n  its last output:\n    ${this.#lines.join('\n    ')}`
  }
}

/**
 * The container of one definition, not yet started: ports published, or the host's network; how to know it is ready;
 * its output kept in `tail`.
 */
function containerOf(
  definition: ContainerDefinition,
  { GenericContainer, Wait }: Testcontainers,
  tail: OutputTail,
) {
  let container = new GenericContainer(definition.image)
    .withEnvironment(definition.environment)
    .withStartupTimeout(180_000)
    .withLogConsumer((stream) => stream.on('data', (chunk) => tail.add(chunk)))
  if (definition.command.length > 0) container = container.withCommand(definition.command)
  if (definition.hostname) container = container.withHostname(definition.hostname)
  if (definition.network === 'host') {
    const { ready } = definition
    const wait: WaitStrategy =
      ready && 'log' in ready
        ? Wait.forLogMessage(ready.log)
        : Wait.forSuccessfulCommand(ready?.command ?? definition.healthcheck.slice(1).join(' '))
    return container.withNetworkMode('host').withWaitStrategy(wait)
  }
  const waits = [Wait.forHealthCheck()]
  if (definition.httpReady) {
    const { path, port, body } = definition.httpReady
    waits.push(Wait.forHttp(path, port).forResponsePredicate((text) => body.test(text.trim())))
  }
  return container
    .withExposedPorts(
      ...definition.ports.map(({ container: port, host: hostPort }) =>
        hostPort === undefined ? port : { container: port, host: hostPort },
      ),
    )
    .withHealthCheck({ test: definition.healthcheck, interval: 1000, timeout: 10_000, retries: 180 })
    .withWaitStrategy(Wait.forAll(waits))
}

/** The definitions to start: compose's with the official images, or the local images on loopback ports. */
async function definitionsFor(
  images: EngineImages,
  runtimeHost: string,
): Promise<Record<ComponentName, ContainerDefinition>> {
  if (images === 'local') return localContainerDefinitions(await freeLocalPorts())
  // a port free here is taken to be free on the engine's host too (the same machine, unless DOCKER_HOST is remote)
  return containerDefinitions({ host: runtimeHost, port: await freePort() })
}

/** Starts the named engines' containers in parallel and waits until each is ready; on a failure stops them all. */
export async function startContainers(
  names: ComponentName[],
  options: StartOptions,
): Promise<StartedContainers> {
  if (options.dockerHost && !process.env.DOCKER_HOST) process.env.DOCKER_HOST = options.dockerHost
  const images = options.images ?? wantedEngineImages(process.env)
  // Ryuk's image cannot be pulled where the engines' cannot: the containers are stopped by stop() instead
  if (images === 'local') process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true'
  const testcontainers = await import('testcontainers')
  const runtime = await testcontainers.getContainerRuntimeClient()
  const definitions = await definitionsFor(images, dialableHost(runtime.info.containerRuntime.host))
  const started = new Map<ComponentName, StartedTestContainer>()
  const stop = async () => {
    await Promise.allSettled([...started.values()].map((container) => container.stop()))
  }
  const results = await Promise.allSettled(
    names.map(async (name) => {
      const definition = definitions[name]
      options.progress(`${name}: starting ${definition.image}`)
      const startedAt = Date.now()
      const tail = new OutputTail()
      try {
        started.set(name, await containerOf(definition, testcontainers, tail).start())
      } catch (error) {
        const hint = images === 'local' ? ' (build the local images with ./scripts/engine-images)' : ''
        throw new Error(
          `${name} (${definition.image}): ${error instanceof Error ? error.message : String(error)}${hint}${tail}`,
        )
      }
      options.progress(
        `${name}: ${definition.image} ready after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
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
    // on the host's network the engine listens on loopback at its own port; otherwise where Docker published it
    const onHost = definition.network === 'host'
    const containerHost = onHost ? '127.0.0.1' : dialableHost(container.getHost())
    const mapped = (port: number) => (onHost ? port : container.getMappedPort(port))
    endpoints[name] = containerEndpoint(definition, containerHost, mapped)
    summary.push(`${definition.image} at ${containerHost}:${mapped(definition.ports[0]?.container ?? 0)}`)
  }
  return { endpoints, summary, stop }
}
