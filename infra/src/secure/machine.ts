// The machine's secure development engines (`scripts/infra up --secure`, issue 45): the same four engines as `up`, on
// the same standard ports, each run as its secure instance (postgres.ts, kafka.ts, consul.ts, redis.ts) with a
// credential per service, from one certificate authority made once for the machine and kept with the engines' state.
// What is known without starting anything (where the state is, which ports, each principal's variables) is read from
// that folder, so that `env`, `status` and `down` in another process find the engines `up --secure` started.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isRedisService } from '@meridian/contracts'
import { kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { consulSettingsFromEnv } from '../consul-http.ts'
import { freePort } from '../free-port.ts'
import { type Layout, layoutFromEnv, repoRoot } from '../layout.ts'
import { consulStop } from '../native/consul.ts'
import { type ComponentName, PidFile, type Progress } from '../native/engine.ts'
import { consulVersion, databaseOfService, kafkaCluster, postgresVersion, redisVersion } from '../probes.ts'
import { assertPortsFree, errorText } from '../processes.ts'
import { discoverServices } from '../system/services.ts'
import { type CertificateAuthority, certificateAuthority } from './certificates.ts'
import { type SecureConsulPorts, secureConsulAccess, startSecureConsul } from './consul.ts'
import type { SecureEngineAccess, SecureEngineOptions } from './engine.ts'
import { type SecureKafkaPorts, secureKafkaAccess, startSecureKafka } from './kafka.ts'
import { securePostgresAccess, startSecurePostgres } from './postgres.ts'
import { secureRedisAccess, startSecureRedis } from './redis.ts'
import { redisTlsFromEnv } from './redis-tls.ts'

/** The ports of the machine's secure engines. */
export interface SecureMachinePorts {
  postgres: number
  kafka: SecureKafkaPorts
  consul: SecureConsulPorts
  redis: number
}

/**
 * The standard ports: where the plaintext engines listen (PostgreSQL 5432, Kafka 9092 and its controller 9093,
 * Consul's API 8500 — HTTPS here — and its server RPC and gossip 8300 and 8301, Redis 6379 — TLS here), and Kafka's
 * mutual-TLS listener on 9094. Clients are configured alike in both modes, but for the TLS and credential variables.
 */
export const standardSecurePorts: SecureMachinePorts = Object.freeze({
  postgres: 5432,
  kafka: { sasl: 9092, controller: 9093, mtls: 9094 },
  consul: { https: 8500, server: 8300, serfLan: 8301 },
  redis: 6379,
})

/** MERIDIAN_SECURE_PORTS' names, each a port of securePorts. */
const portNames = {
  postgres: (ports: SecureMachinePorts, port: number) => {
    ports.postgres = port
  },
  kafka: (ports: SecureMachinePorts, port: number) => {
    ports.kafka.sasl = port
  },
  'kafka-controller': (ports: SecureMachinePorts, port: number) => {
    ports.kafka.controller = port
  },
  'kafka-mtls': (ports: SecureMachinePorts, port: number) => {
    ports.kafka.mtls = port
  },
  consul: (ports: SecureMachinePorts, port: number) => {
    ports.consul.https = port
  },
  'consul-server': (ports: SecureMachinePorts, port: number) => {
    ports.consul.server = port
  },
  'consul-serf': (ports: SecureMachinePorts, port: number) => {
    ports.consul.serfLan = port
  },
  redis: (ports: SecureMachinePorts, port: number) => {
    ports.redis = port
  },
} as const

/**
 * The ports `up --secure` uses: the standard ones, but for those MERIDIAN_SECURE_PORTS names
 * (`postgres=15432,kafka=19092,…`; the names: postgres, kafka, kafka-controller, kafka-mtls, consul, consul-server,
 * consul-serf, redis), so that a test runs the machine's secure engines beside the shared plaintext ones.
 */
export function securePortsFromEnv(env: NodeJS.ProcessEnv = process.env): SecureMachinePorts {
  const ports = structuredClone(standardSecurePorts) as SecureMachinePorts
  const given = env.MERIDIAN_SECURE_PORTS?.trim()
  if (!given) return ports
  for (const entry of given.split(',')) {
    const [name = '', value = ''] = entry.split('=').map((part) => part.trim())
    const port = Number(value)
    if (!Object.hasOwn(portNames, name) || !Number.isInteger(port) || port < 1 || port > 65535) {
      throw new Error(
        `MERIDIAN_SECURE_PORTS: '${entry}' is not <name>=<port> with a name among ${Object.keys(portNames).join(', ')}`,
      )
    }
    portNames[name as keyof typeof portNames](ports, port)
  }
  return ports
}

/**
 * Eight free ports of this machine as the secure engines' ports: for engines of a test's or a run's own beside the
 * shared ones (what `ports` of ensureSecureInfra takes).
 */
export async function freeSecurePorts(): Promise<SecureMachinePorts> {
  const found = new Set<number>()
  while (found.size < 8) found.add(await freePort())
  const [postgres, sasl, controller, mtls, https, server, serfLan, redis] = [...found] as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  return { postgres, kafka: { sasl, controller, mtls }, consul: { https, server, serfLan }, redis }
}

/** Every port of these, for the checks that nothing else listens there and that no plaintext engine shares one. */
export function securePortList(ports: SecureMachinePorts): number[] {
  return [
    ports.postgres,
    ports.kafka.sasl,
    ports.kafka.controller,
    ports.kafka.mtls,
    ports.consul.https,
    ports.consul.server,
    ports.consul.serfLan,
    ports.redis,
  ]
}

/**
 * Where the machine's secure engines keep their state: MERIDIAN_SECURE_DIR, else `secure` in the cache folder the
 * native engines use; as root /var/lib/meridian/secure, for the reason the native PostgreSQL lives under
 * /var/lib/meridian then: its server runs as the `postgres` account, which cannot pass through root's home.
 */
export function secureStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MERIDIAN_SECURE_DIR) return env.MERIDIAN_SECURE_DIR
  return process.getuid?.() === 0 ? '/var/lib/meridian/secure' : join(layoutFromEnv(env).cacheDir, 'secure')
}

/** Each engine's principals: every service of services/ that uses the engine (a database, declared Redis access). */
export function securePrincipals(): Record<ComponentName, string[]> {
  const services = discoverServices(join(repoRoot, 'services')).map((service) => service.name)
  return {
    postgres: services.filter((name) => Object.hasOwn(databaseOfService, name)),
    kafka: services,
    consul: services,
    redis: services.filter((name) => isRedisService(name)),
  }
}

/** What `up --secure` records in the state folder (engines.json): where the engines listen, and for whom. */
interface SecureMachineRecord {
  host: string
  ports: SecureMachinePorts
  principals: Record<ComponentName, string[]>
}

const secureComponents: readonly ComponentName[] = ['postgres', 'kafka', 'consul', 'redis']

/** How each engine's process, recorded in its folder's pid file, is stopped (its own clean stop, then killed). */
const stopOf: Record<ComponentName, { signal: NodeJS.Signals; graceMs: number }> = {
  postgres: { signal: 'SIGINT', graceMs: 30_000 },
  kafka: { signal: 'SIGTERM', graceMs: 30_000 },
  consul: consulStop,
  redis: { signal: 'SIGTERM', graceMs: 10_000 },
}

const recordFile = (dir: string): string => join(dir, 'engines.json')

function readRecord(dir: string): SecureMachineRecord | undefined {
  const file = recordFile(dir)
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SecureMachineRecord) : undefined
}

/** The pid of each secure engine of this state folder that runs (by the pid files their starters wrote). */
export function runningSecureEngines(dir: string): Partial<Record<ComponentName, number>> {
  return Object.fromEntries(
    secureComponents.flatMap((name) => {
      const pid = existsSync(join(dir, name)) ? new PidFile(join(dir, name)).live() : undefined
      return pid === undefined ? [] : [[name, pid]]
    }),
  )
}

/** The machine's secure engines as their clients see them: the CA, each principal's and the administrator's variables. */
export interface SecureMachine {
  dir: string
  host: string
  ports: SecureMachinePorts
  caFile: string
  principals: Record<ComponentName, string[]>
  /** per engine: its administrator's variables and each principal's */
  engines: Record<ComponentName, SecureEngineAccess>
  /** the administrator's variables of all four engines (superuser, Kafka's admin, Redis' admin, Consul's management token) */
  adminEnv(): Record<string, string>
  /** a service's own variables of every engine it uses: its role, SCRAM user, ACL user and token only */
  serviceEnv(service: string): Record<string, string>
}

function machineOf(dir: string, record: SecureMachineRecord, ca: CertificateAuthority): SecureMachine {
  const options = <Ports>(name: ComponentName, ports: Ports): SecureEngineOptions<Ports> => ({
    dir: join(dir, name),
    ca,
    host: record.host,
    ports,
    principals: record.principals[name],
  })
  const engines: Record<ComponentName, SecureEngineAccess> = {
    postgres: securePostgresAccess(options('postgres', { postgres: record.ports.postgres })),
    kafka: secureKafkaAccess(options('kafka', record.ports.kafka)),
    consul: secureConsulAccess(options('consul', record.ports.consul)),
    redis: secureRedisAccess(options('redis', { redis: record.ports.redis })),
  }
  return {
    dir,
    host: record.host,
    ports: record.ports,
    caFile: ca.caFile,
    principals: record.principals,
    engines,
    adminEnv: () => Object.assign({}, ...secureComponents.map((name) => engines[name].adminEnv())),
    serviceEnv(service) {
      const using = secureComponents.filter((name) => record.principals[name].includes(service))
      if (using.length === 0) {
        throw new Error(
          `'${service}' is no service of the secure engines (${record.principals.consul.join(', ')})`,
        )
      }
      return Object.assign({}, ...using.map((name) => engines[name].envFor(service)))
    },
  }
}

/**
 * The machine's secure engines recorded in `dir` (by an earlier `up --secure`), whether they run or not; undefined
 * when `up --secure` never ran there.
 */
export async function secureMachine(dir: string): Promise<SecureMachine | undefined> {
  const record = readRecord(dir)
  if (!record || !existsSync(join(dir, 'ca', 'ca.pem'))) return undefined
  return machineOf(dir, record, await certificateAuthority(join(dir, 'ca')))
}

/** Each engine's own version, asked as its administrator over TLS; throws while it does not answer. */
export const secureProbe: Record<ComponentName, (machine: SecureMachine) => Promise<string>> = {
  postgres: (machine) => postgresVersion(machine.engines.postgres.adminEnv().DATABASE_URL ?? ''),
  kafka: async (machine) => {
    const env = machine.engines.kafka.adminEnv()
    const cluster = await kafkaCluster(env.KAFKA_BROKERS ?? '', kafkaSecurityFromEnv(env))
    return `Kafka broker (${cluster.brokers} node${cluster.brokers === 1 ? '' : 's'}, SASL_SSL)`
  },
  consul: (machine) => consulVersion(consulSettingsFromEnv(machine.engines.consul.adminEnv())),
  redis: (machine) => {
    const env = machine.engines.redis.adminEnv()
    const url = env.REDIS_URL ?? ''
    return redisVersion(url, redisTlsFromEnv(url, env))
  },
}

/** The address a client is given for each engine (no credentials in it): what `up` and `status` show. */
export function secureEndpoint(machine: SecureMachine, name: ComponentName): string {
  const { host, ports } = machine
  const address = host.includes(':') ? `[${host}]` : host
  switch (name) {
    case 'postgres':
      return `postgres://${address}:${ports.postgres} (sslmode=verify-full)`
    case 'kafka':
      return `${address}:${ports.kafka.sasl} (SASL_SSL, SCRAM-SHA-512)`
    case 'consul':
      return `https://${address}:${ports.consul.https}`
    case 'redis':
      return `rediss://${address}:${ports.redis}`
  }
}

export interface SecureUpOptions {
  /** the state folder; default secureStateDir(env) */
  dir?: string
  /** default securePortsFromEnv(env) */
  ports?: SecureMachinePorts
  /** default 127.0.0.1 (the server certificates name it and localhost) */
  host?: string
  env?: NodeJS.ProcessEnv
  layout?: Layout
  progress?: Progress
}

/**
 * Starts the machine's secure engines that do not run (reusing those that do and answer), each with its credentials
 * for every service, and records where they are. Refuses while those of `dir` run on other ports. The plaintext
 * engines' check is the caller's (infra's index.ts), which knows them.
 */
export async function upSecureEngines(options: SecureUpOptions = {}): Promise<SecureMachine> {
  const env = options.env ?? process.env
  const dir = options.dir ?? secureStateDir(env)
  const ports = options.ports ?? securePortsFromEnv(env)
  const host = options.host ?? '127.0.0.1'
  const layout = options.layout ?? layoutFromEnv(env)
  const progress = options.progress ?? (() => {})
  const earlier = readRecord(dir)
  const running = runningSecureEngines(dir)
  if (
    earlier &&
    Object.keys(running).length > 0 &&
    (earlier.host !== host || JSON.stringify(earlier.ports) !== JSON.stringify(ports))
  ) {
    throw new Error(
      `the secure engines of ${dir} run on other ports (${securePortList(earlier.ports).join(', ')}): stop them first (scripts/infra down)`,
    )
  }
  // the postgres account (as root) passes through this folder to its server's; every secret in it is a file of 0600
  mkdirSync(dir, { recursive: true, mode: 0o711 })
  chmodSync(dir, 0o711)
  const ca = await certificateAuthority(join(dir, 'ca'))
  const record: SecureMachineRecord = { host, ports, principals: securePrincipals() }
  writeFileSync(recordFile(dir), `${JSON.stringify(record, null, 2)}\n`)
  const machine = machineOf(dir, record, ca)
  const engineOptions = <Ports>(name: ComponentName, enginePorts: Ports) => ({
    dir: join(dir, name),
    ca,
    host,
    ports: enginePorts,
    principals: record.principals[name],
    // clients may name loopback either way
    serverNames: ['localhost'],
  })
  const start: Record<ComponentName, () => Promise<unknown>> = {
    postgres: () =>
      startSecurePostgres(engineOptions('postgres', { postgres: ports.postgres }), (line) =>
        progress(`postgres: ${line}`),
      ),
    kafka: () =>
      startSecureKafka({
        ...engineOptions('kafka', ports.kafka),
        layout,
        progress: (line) => progress(`kafka: ${line}`),
      }),
    consul: () => startSecureConsul({ ...engineOptions('consul', ports.consul), layout }),
    redis: () => startSecureRedis(engineOptions('redis', { redis: ports.redis })),
  }
  const enginePorts: Record<ComponentName, number[]> = {
    postgres: [ports.postgres],
    kafka: [ports.kafka.sasl, ports.kafka.controller, ports.kafka.mtls],
    consul: [ports.consul.https, ports.consul.server, ports.consul.serfLan],
    redis: [ports.redis],
  }
  const results = await Promise.allSettled(
    secureComponents.map(async (name) => {
      const pid = running[name]
      if (pid !== undefined) {
        try {
          progress(`${name}: reusing ${await secureProbe[name](machine)} (pid ${pid}, secure)`)
          return
        } catch (error) {
          progress(`${name}: pid ${pid} does not answer (${errorText(error)}); restarting it`)
          await new PidFile(join(dir, name)).stop(stopOf[name].signal, stopOf[name].graceMs)
        }
      }
      // nothing else may hold its ports: a plaintext engine left running, another program
      assertPortsFree(name, enginePorts[name])
      const startedAt = Date.now()
      await start[name]()
      progress(
        `${name}: ${await secureProbe[name](machine)} healthy at ${secureEndpoint(machine, name)} after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
      )
    }),
  )
  const failures = results.flatMap((result, index) =>
    result.status === 'rejected' ? [`${secureComponents[index]}: ${errorText(result.reason)}`] : [],
  )
  if (failures.length > 0) throw new Error(failures.join('\n'))
  return machine
}

/** Stops the secure engines of `dir` (by their recorded pids); the names of those that ran. */
export async function downSecureEngines(
  dir: string,
  progress: Progress = () => {},
): Promise<ComponentName[]> {
  const running = runningSecureEngines(dir)
  const stopped = await Promise.all(
    secureComponents.map(async (name) => {
      const pid = running[name]
      if (pid === undefined) return []
      await new PidFile(join(dir, name)).stop(stopOf[name].signal, stopOf[name].graceMs)
      progress(`${name}: stopped secure pid ${pid}`)
      return [name]
    }),
  )
  return stopped.flat()
}

/**
 * The machine's secure engines of this environment's state folder when they run and the environment's DATABASE_URL is
 * their administrator's (what `eval "$(scripts/infra env)"` gives on them); undefined otherwise.
 */
export async function secureMachineOfEnv(env: NodeJS.ProcessEnv): Promise<SecureMachine | undefined> {
  const dir = secureStateDir(env)
  if (!env.DATABASE_URL || Object.keys(runningSecureEngines(dir)).length === 0) return undefined
  const machine = await secureMachine(dir)
  return machine?.engines.postgres.adminEnv().DATABASE_URL === env.DATABASE_URL ? machine : undefined
}
