// The whole Meridian system as real processes in a namespace of its own (@meridian/infra/system): the payment-provider
// simulator, auth, every other service of services/, then the gateway, each with a fresh database, the run's Kafka
// namespace and Consul names, and a log file. For end-to-end tests, fault runs and benchmarks; stopped, killed and
// restarted one by one by the pids it recorded, and undone by close().
import { randomBytes } from 'node:crypto'
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type KafkaSecurity, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { consulSettingsFromEnv } from '../consul-http.ts'
import { freePort } from '../free-port.ts'
import { layoutFromEnv, repoRoot } from '../layout.ts'
import {
  createPaymentSimulator,
  type PaymentSimulator,
  type PaymentSimulatorOptions,
} from '../payment-simulator/index.ts'
import { editPostgresUrl, type TopicReplication } from '../probes.ts'
import { errorText, isAlive, PortInUseError, tcpListener, waitFor } from '../processes.ts'
import { type SecureMachine, secureMachineOfEnv } from '../secure/machine.ts'
import { makeAdministrator } from './administrator.ts'
import { type ConsulSettings, deregisterInstance, instanceIds, isPassing } from './consul-instances.ts'
import { createRunDatabase, type RunDatabase } from './databases.ts'
import { createNamespaceTopics, deleteNamespace } from './kafka-namespace.ts'
import { buildImages, buildServices, productionSettings, systemFormFromEnv } from './production.ts'
import { systemRedisDatabase, withRedisDatabase } from './redis-database.ts'
import { discoverServices, identityProvider, type SystemService } from './services.ts'
import {
  runServiceScript,
  type ServiceHost,
  type SpawnedService,
  type SystemForm,
  spawnService,
} from './spawned-service.ts'

/**
 * What every service of a run is given besides its endpoints and names: logs at info, limits far above what a test
 * sends (hundreds of requests and logins from one address would otherwise answer 429: the limiters have tests of
 * their own), and the gateway's merged document rebuilt on every request (it shows the run's instances at once).
 * `settings` in SystemOptions overrides any of them.
 */
export const systemSettings: Readonly<Record<string, string>> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'info',
  CONSUL_REGISTER: 'true',
  RATE_LIMIT_MAX: '1000000000',
  LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000000',
  LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000000000',
  DOCS_CACHE_MS: '0',
}

/** Payment's webhook endpoint (routes/stripe-webhooks), where the run's simulator delivers its events. */
export const paymentWebhookPath = '/api/v1/payments/webhooks/stripe'

/** payment's development default of STRIPE_WEBHOOK_SECRET (services/payment/src/config.ts), public on purpose. */
export const developmentWebhookSecret = 'whsec_meridian_development'

export interface SystemOptions {
  /** first part of the run's database names, `<prefix>_<service>_<run>`; default 'system' */
  prefix?: string
  /**
   * default 8080 (a production run: a free port, as production auth refuses the console's development address on
   * 8080); refused when someone listens there already
   */
  gatewayPort?: number
  /** the payment-provider simulator's port: default 3099, 0 lets the kernel pick one */
  simulatorPort?: number
  /** the simulator's other settings (delays, failure rate, seed) */
  simulator?: Omit<PaymentSimulatorOptions, 'port' | 'log'>
  /** only these services (by folder name; default every one with a src/main.ts) */
  only?: string[]
  /**
   * instances per service (default 1): the others are `<name>#2`, `<name>#3`, … in `services`, with the same Consul
   * name, environment and database, each on a port of its own (a service run as a replicated deployment)
   */
  replicas?: Record<string, number>
  /** how the run's topics are replicated: default 1 copy; on a three-broker cluster 3 copies, min.insync.replicas 2 */
  topicReplication?: TopicReplication
  /** overrides of systemSettings for every service (rate limits, LOG_LEVEL, ...) */
  settings?: Record<string, string>
  /** extra environment per service name (e.g. order: {SAGA_STEP_TIMEOUT_MS: '4000'}); '*' for every service */
  env?: Record<string, Record<string, string>>
  /** Redis database number of the run; default systemRedisDatabase */
  redisDatabase?: number
  /**
   * how many services start at once after auth (the machine may be small); default 2 for the sources under tsx (each
   * start compiles, a core's work for a second or two), 4 for the builds and images (a start mostly waits: Kafka's group
   * joins, Consul's checks)
   */
  startConcurrency?: number
  /** per service; default 90 s */
  readyTimeoutMs?: number
  /** how often a starting service's /health/ready is asked; default 250 ms */
  readyPollMs?: number
  /** progress lines; default stderr */
  log?: (line: string) => void
  /** where the endpoints (DATABASE_URL, KAFKA_BROKERS, CONSUL_HTTP_ADDR, REDIS_URL) and PATH come from */
  baseEnv?: NodeJS.ProcessEnv
  /**
   * The machine's secure engines (`scripts/infra up --secure`) the endpoints of baseEnv are: each service is then given
   * its own credentials of them (secureServiceEnv), baseEnv's administrator's being the run's own (its databases,
   * topics and clean-up). Default: those of baseEnv's secure state folder when they run and baseEnv's DATABASE_URL is
   * their administrator's (what `eval "$(scripts/infra env)"` gives on them).
   */
  secureEngines?: SecureMachine
  /**
   * development: the sources under tsx; production: each service built (./scripts/build, kept when up to date) and
   * run as `node dist/main.js` with NODE_ENV=production and the run's own production secrets (production.ts).
   * Default: MERIDIAN_SYSTEM_BUILD of baseEnv, else development.
   */
  form?: SystemForm
  /**
   * A run across hosts (infra/src/cluster, `cluster`): the services spread over these, instance n of the i-th service on host
   * (i + n - 1) mod hosts; each listens on its host's address at the service's port (the gateway's 8080 on every
   * host) and registers with its host's Consul agent. The gateway runs `replicas.gateway` instances too (on one
   * machine, the first on `gatewayPort` and the others on ports of their own). The engines'
   * addresses still come from baseEnv (the cluster's).
   */
  cluster?: SystemCluster
  /**
   * A released version's tree (infra/src/release/checkout.ts): every service starts from it instead of this tree (or,
   * in the images form, from its images, meridian/<name>:<version>), and `upgrade(name)` moves one instance to this
   * tree's code (its images). Not the production form.
   */
  release?: { version: string; root: string }
  /**
   * What `upgrade(name)` moves an instance to: a tree (its dependencies installed) and its name in log lines. Default
   * this tree. A campaign gives another to try a change that is not in this tree (tests/e2e/src/upgrade-break.ts).
   */
  upgradeTo?: { label: string; root: string }
}

/** Where a run across hosts runs (infra/src/cluster). */
export interface SystemCluster {
  hosts: SystemHost[]
  /** this machine's address as the hosts reach it: the payment-provider simulator listens there */
  machineAddress: string
  /** the DATABASE_URL a service is given for its database's name (a multi-host URL); default on baseEnv's server */
  databaseUrl?: (database: string) => string
  /**
   * a service's own credentials and TLS of the cluster's secure engines (e.g. its Kafka SCRAM user): given, the
   * services get these instead of baseEnv's, which are the administrator's
   */
  serviceEnv?: (service: string) => Record<string, string>
}

/** A host of a run across hosts: where its services run, and the Consul agent they register with. */
export interface SystemHost extends ServiceHost {
  /** its Consul agent's HTTP address */
  consulAddr: string
}

export interface SystemServiceInfo {
  name: string
  /** the current process (a restart changes it); undefined while stopped */
  pid: number | undefined
  port: number
  baseUrl: string
  logFile: string
  databaseUrl: string | undefined
  consulName: string
  /** the host it runs on (a run across hosts) */
  host: string | undefined
  /** the release its process runs (SystemOptions.release) until `upgrade` moves it; undefined: this tree */
  release: string | undefined
}

export interface MeridianSystem {
  runId: string
  /** which form of the services runs */
  form: SystemForm
  /** logs of the run (one file per service, simulator.log) */
  runDir: string
  /** `KAFKA_NAMESPACE` of every service, e.g. `e2e-m3x1a2b3.` */
  kafkaNamespace: string
  gatewayUrl: string
  /** every gateway instance's address (one, unless replicas.gateway asks for more or the run is across hosts) */
  gatewayUrls: string[]
  simulatorUrl: string
  /** name (`<name>#<n>` for a replica) -> its process now */
  readonly services: Record<string, SystemServiceInfo>
  /** an administrator in the run's auth (undefined when auth is not part of the run) */
  admin: { email: string; password: string } | undefined
  /** the simulator itself (stats, reset) */
  simulator: PaymentSimulator
  /** `signal` (SIGTERM: the service drains and leaves Consul), SIGKILL after graceMs; resolves once it is gone */
  stop(name: string, signal?: NodeJS.Signals, graceMs?: number): Promise<void>
  /** SIGKILL by pid: no draining, its Consul registration stays until it turns critical (or close()) */
  kill(name: string): Promise<void>
  /** starts a stopped service again: the same port, environment and database; resolves once it is ready */
  start(name: string): Promise<void>
  /**
   * One instance of a run started from a release (SystemOptions.release) moved to this tree's code (or upgradeTo's): stopped as `stop`
   * does (SIGTERM: it drains), then started from this tree on the same port, environment and database, where it
   * applies this tree's expand migrations as it starts. Resolves once it is ready and passing in Consul.
   */
  upgrade(name: string, graceMs?: number): Promise<void>
  /**
   * The service's `migrate` with these arguments (`--contract` for its contract migrations), run once beside its
   * instances with one's environment and code: the release's while `name` runs it, else this tree's (src/migrate.ts
   * under tsx, the build's dist/migrate.js, or the image's in a container). What it printed.
   */
  migrate(name: string, args?: readonly string[]): Promise<string>
  /** what the service has logged, over all its lives */
  logs(name: string): string
  /** stops everything the run started (by pid), removes what a kill left in Consul, drops databases and topics */
  close(): Promise<void>
}

interface Member {
  /** the service's name, or `<name>#<n>` for its n-th instance */
  key: string
  /** the release whose code it runs (SystemOptions.release); undefined once it runs this tree's */
  release?: string
  /** the first instance of a replicated service: its database and environment are this one's too */
  replicaOf?: Member
  service: SystemService
  consulName: string
  /** the host it runs on (a run across hosts) */
  host?: SystemHost
  port: number
  logFile: string
  env: NodeJS.ProcessEnv
  database?: RunDatabase
  process?: SpawnedService
}

function requireEnv(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name]
  if (!value)
    throw new Error(
      `${name} is not set: the system needs the engines (./scripts/infra up; eval "$(./scripts/infra env)")`,
    )
  return value
}

/** `realtime-gateway` -> `REALTIME_GATEWAY_SERVICE_NAME` */
const nameVariable = (name: string) => `${name.toUpperCase().replaceAll('-', '_')}_SERVICE_NAME`

/** The paths of a document that a service serves itself (not the chassis' operational ones). */
async function ownPaths(baseUrl: string): Promise<string[]> {
  const response = await fetch(`${baseUrl}/docs/json`, { signal: AbortSignal.timeout(5000) })
  const document = (await response.json()) as { paths?: Record<string, unknown> }
  return Object.keys(document.paths ?? {}).filter(
    (path) => !/^\/(health|healthz|metrics|docs)(\/|$)/.test(path),
  )
}

/** Runs `work` over `items`, at most `limit` at a time; fails with the first failure once all have settled. */
async function inBatches<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items]
  const failures: unknown[] = []
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(limit, queue.length)) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        try {
          await work(item)
        } catch (error) {
          failures.push(error)
        }
      }
    }),
  )
  if (failures.length > 0) throw failures[0]
}

/**
 * The variables of an engine's credential or TLS: on secure engines a service gets its own (secureServiceEnv), never
 * those of the environment the run was started from, which are the administrator's.
 */
const engineCredentialVariable =
  /^(DATABASE_URL|[A-Z0-9_]+_DATABASE_URL|KAFKA_TLS.*|KAFKA_SASL_.*|CONSUL_HTTP_TOKEN|CONSUL_CACERT|CONSUL_CLIENT_.*|REDIS_URL|REDIS_TLS_.*|ENGINES_PLAINTEXT_ALLOWED)$/

export function withoutEngineCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !engineCredentialVariable.test(name)))
}

/**
 * A service's own lines of the secure engines (`scripts/infra env --service`): its role (the run's database replaces
 * its standing one), SCRAM user, token, and its Redis user on the run's database number.
 */
export function secureServiceEnv(
  machine: SecureMachine,
  service: string,
  redisDatabase: number = systemRedisDatabase,
): Record<string, string> {
  const own = machine.serviceEnv(service)
  // its standing database's variable would name another database than the run's
  const { [`${service.toUpperCase().replaceAll('-', '_')}_DATABASE_URL`]: _standing, ...rest } = own
  return onRedisDatabase(rest, redisDatabase)
}

/** A service's own variables with its REDIS_URL (when it has one) on the run's database number. */
function onRedisDatabase(env: Record<string, string>, redisDatabase: number): Record<string, string> {
  return env.REDIS_URL ? { ...env, REDIS_URL: withRedisDatabase(env.REDIS_URL, redisDatabase) } : env
}

export async function startSystem(options: SystemOptions = {}): Promise<MeridianSystem> {
  const started = Date.now()
  const baseEnv = options.baseEnv ?? process.env
  const log = options.log ?? ((line: string) => process.stderr.write(`[system] ${line}\n`))
  const serverUrl = requireEnv(baseEnv, 'DATABASE_URL')
  const brokers = requireEnv(baseEnv, 'KAFKA_BROKERS')
  const consul: ConsulSettings = consulSettingsFromEnv(baseEnv, requireEnv(baseEnv, 'CONSUL_HTTP_ADDR'))
  const redisDatabase = options.redisDatabase ?? systemRedisDatabase
  const redisUrl = withRedisDatabase(requireEnv(baseEnv, 'REDIS_URL'), redisDatabase)
  // a secure broker's TLS and SASL, the administrator's, for the run's topics (none for a plaintext one)
  const kafkaSecurity: KafkaSecurity = kafkaSecurityFromEnv(baseEnv)
  const secure = options.secureEngines ?? (await secureMachineOfEnv(baseEnv))
  const prefix = options.prefix ?? 'system'
  if (!/^[a-z][a-z0-9_]*$/.test(prefix))
    throw new Error(`prefix must be lower-case letters, digits and _ (got '${prefix}')`)
  const form = options.form ?? systemFormFromEnv(baseEnv)
  // across hosts each gateway has its host's 8080
  const gatewayPort =
    options.gatewayPort ?? (form === 'development' || options.cluster ? 8080 : await freePort())

  // a release's tree runs as its sources or its images (meridian/<name>:<version>, built by its own scripts/images);
  // its production build is not in this tree's build/
  if (options.release && form === 'production')
    throw new Error(
      `a run from release ${options.release.version} starts the development or images form, not ${form}`,
    )
  if (options.upgradeTo && form === 'images')
    throw new Error(
      `upgradeTo is a tree of sources: a run of the images form moves instances to this tree's images`,
    )
  const services = discoverServices(join(options.release?.root ?? repoRoot, 'services')).filter(
    (service) => !options.only || options.only.includes(service.name),
  )
  // what a member started from the release moves to (MeridianSystem.upgrade): this tree's services (or upgradeTo's),
  // listed once
  const target = options.upgradeTo ?? { label: 'this tree', root: repoRoot }
  const currentServices = options.release ? discoverServices(join(target.root, 'services')) : services
  const unknown = (options.only ?? []).filter((name) => !services.some((service) => service.name === name))
  if (unknown.length > 0)
    throw new Error(`no such service: ${unknown.join(', ')} (services/<name>/src/main.ts)`)
  const gateway = services.find((service) => service.isGateway)
  if (gateway && !options.cluster) {
    // the gateway listens on 127.0.0.1: a listener on another address (a cluster campaign's proxy on a test host's
    // address, running beside) holds the same port number without keeping it from the gateway
    const holder = tcpListener(gatewayPort, '127.0.0.1')
    if (holder) throw new PortInUseError(`the system's gateway`, holder)
  }
  if (form === 'images') {
    log(`images form: ./scripts/images ${services.map((service) => service.name).join(' ')}`)
    buildImages(services.map((service) => service.name))
  }
  if (form === 'production') {
    log(`production form: ./scripts/build ${services.map((service) => service.name).join(' ')}`)
    buildServices(services.map((service) => service.name))
  }

  const runId = `${prefix.replaceAll('_', '-')}-${Date.now().toString(36)}${randomBytes(2).toString('hex')}`
  const runDir = join(layoutFromEnv(baseEnv).componentDir('system'), runId)
  mkdirSync(runDir, { recursive: true })
  const kafkaNamespace = `${runId}.`
  const dbSuffix = runId.slice(prefix.length + 1)

  // ports first: every service is told where auth's keys are, and each keeps its port across restarts
  const taken = new Set<number>([gatewayPort])
  const hosts = options.cluster?.hosts ?? []
  const hostOf = (index: number, instance: number): SystemHost | undefined =>
    hosts.length === 0 ? undefined : hosts[(index + instance - 1) % hosts.length]
  const portFor = async (service: SystemService, index = 0, instance = 1): Promise<number> => {
    // the first gateway on this machine has the run's address; across hosts each gateway has its host's
    if (service.isGateway && (instance === 1 || hosts.length > 0)) return gatewayPort
    // across hosts each host has ports of its own: a port per service, and one more set per round of the hosts
    if (hosts.length > 0) return 3100 + index + 100 * Math.floor((instance - 1) / hosts.length)
    for (;;) {
      const port = await freePort()
      if (!taken.has(port)) {
        taken.add(port)
        return port
      }
    }
  }
  const members = new Map<string, Member>()
  for (const [index, service] of services.entries()) {
    const firstHost = hostOf(index, 1)
    const first: Member = {
      key: service.name,
      service,
      consulName: `${service.name}-${runId}`,
      ...(firstHost ? { host: firstHost } : {}),
      port: await portFor(service, index, 1),
      logFile: join(runDir, `${service.name}.log`),
      env: {},
      ...(options.release ? { release: options.release.version } : {}),
    }
    members.set(first.key, first)
    // the gateway too: a second one on this machine listens on a port of its own (gatewayUrls lists both)
    const instances = options.replicas?.[service.name] ?? 1
    for (let instance = 2; instance <= instances; instance++) {
      const key = `${service.name}#${instance}`
      const host = hostOf(index, instance)
      members.set(key, {
        ...first,
        key,
        replicaOf: first,
        ...(host ? { host } : {}),
        port: await portFor(service, index, instance),
        logFile: join(runDir, `${service.name}-${instance}.log`),
      })
    }
  }
  const addressOf = (member: Member) => member.host?.address ?? '127.0.0.1'
  const baseUrlOf = (member: Member) => `http://${addressOf(member)}:${member.port}`
  /** the first instance of each service: one database, one Consul name, one route each */
  const firsts = () => [...members.values()].filter((member) => !member.replicaOf)

  // undone in reverse order by close(), whatever got done
  let simulator: PaymentSimulator | undefined
  let simulatorLog: ReturnType<typeof createWriteStream> | undefined
  let topicsCreated = false
  const killOnExit = () => {
    // the test runner ends without close(): take the services down with it rather than leave them running
    for (const member of members.values()) {
      if (member.process && isAlive(member.process.pid)) process.kill(member.process.pid, 'SIGTERM')
    }
  }
  process.on('exit', killOnExit)

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      const attempt = async (label: string, step: () => Promise<unknown>) => {
        try {
          await step()
        } catch (error) {
          log(`close: ${label}: ${errorText(error)}`)
        }
      }
      // the gateway first (no new requests), then the rest at once, auth last (the others verify its tokens)
      const running = [...members.values()].filter((member) => member.process)
      const stopAll = (group: Member[]) =>
        Promise.all(group.map((member) => attempt(`stop ${member.key}`, () => stopMember(member))))
      await stopAll(running.filter((member) => member.service.isGateway))
      await stopAll(
        running.filter((member) => !member.service.isGateway && member.service.name !== identityProvider),
      )
      await stopAll(running.filter((member) => member.service.name === identityProvider))
      process.off('exit', killOnExit)
      // a service deregisters itself on SIGTERM; a killed one's registration is still there
      // (each agent holds its own host's registrations)
      const agents =
        hosts.length > 0 ? hosts.map((host) => ({ ...consul, address: host.consulAddr })) : [consul]
      for (const member of firsts()) {
        await attempt(`deregister ${member.consulName}`, async () => {
          for (const agent of agents)
            for (const id of await instanceIds(agent, member.consulName)) await deregisterInstance(agent, id)
        })
      }
      for (const member of firsts()) {
        const database = member.database
        if (database) await attempt(`drop database ${database.name}`, () => database.drop())
      }
      if (topicsCreated)
        await attempt(`delete Kafka namespace ${kafkaNamespace}`, () =>
          deleteNamespace(brokers, kafkaNamespace, kafkaSecurity),
        )
      if (simulator)
        await attempt('stop the payment-provider simulator', () => simulator?.close() ?? Promise.resolve())
      simulatorLog?.end()
      log(`${runId}: closed (logs in ${runDir})`)
    })()
    return closing
  }

  const stopMember = async (member: Member, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000) => {
    const running = member.process
    if (!running) return
    await running.stop(signal, graceMs)
    member.process = undefined
  }

  const startMember = async (member: Member) => {
    if (member.process && isAlive(member.process.pid))
      throw new Error(`${member.key} is running (pid ${member.process.pid})`)
    member.process = await spawnService(member.service, {
      env: member.env,
      port: member.port,
      logFile: member.logFile,
      form,
      ...(member.release !== undefined ? { imageTag: member.release } : {}),
      ...(member.host ? { host: member.host } : {}),
      ...(options.readyTimeoutMs ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
      ...(options.readyPollMs ? { readyPollMs: options.readyPollMs } : {}),
    })
    // ready is not yet found: others route to it once Consul lists it as passing (a rolling restart stops the next
    // instance only then, as a deployment waits for the new one)
    if (member.env.CONSUL_REGISTER === 'true') {
      const agent = { ...consul, address: member.host?.consulAddr ?? consul.address }
      await waitFor(
        `${member.key} to pass in Consul`,
        async () => {
          if (!(await isPassing(agent, member.consulName, addressOf(member), member.port)))
            throw new Error('not among the passing instances yet')
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      )
    }
    log(`${member.key}: pid ${member.process.pid} on ${member.process.baseUrl}`)
  }

  const memberOf = (name: string): Member => {
    const member = members.get(name)
    if (!member) throw new Error(`no service ${name} in this system (${[...members.keys()].join(', ')})`)
    return member
  }

  let admin: MeridianSystem['admin']
  try {
    await createNamespaceTopics(brokers, kafkaNamespace, options.topicReplication, kafkaSecurity)
    topicsCreated = true

    const auth = members.get(identityProvider)
    const gatewayMembers = [...members.values()].filter((member) => member.service.isGateway)
    const publicUrl = gatewayMembers[0] ? baseUrlOf(gatewayMembers[0]) : `http://127.0.0.1:${gatewayPort}`
    const production: Record<string, string> = form === 'development' ? {} : productionSettings(publicUrl)
    // on secure engines (the machine's, or a secure cluster's, whose services get their own credentials) nothing is
    // reached in plaintext: production is not told it may be, so a service that would be refuses to start
    if (secure || options.cluster?.serviceEnv) delete production.ENGINES_PLAINTEXT_ALLOWED

    simulatorLog = createWriteStream(join(runDir, 'simulator.log'), { flags: 'a' })
    const simulatorPort = options.simulatorPort ?? 3099
    // the simulator delivers its webhook events to payment as Stripe would, through the run's gateway, signed with
    // the secret payment checks them with (the one its environment below gets)
    const paymentMember = members.get('payment')
    const webhookBase = paymentMember
      ? gatewayMembers.length > 0
        ? publicUrl
        : baseUrlOf(paymentMember)
      : undefined
    const webhookSecret =
      options.env?.payment?.STRIPE_WEBHOOK_SECRET ??
      options.env?.['*']?.STRIPE_WEBHOOK_SECRET ??
      options.settings?.STRIPE_WEBHOOK_SECRET ??
      production.STRIPE_WEBHOOK_SECRET ??
      (baseEnv.STRIPE_WEBHOOK_SECRET || developmentWebhookSecret)
    const webhooks = [
      ...(options.simulator?.webhooks ?? []),
      ...(webhookBase ? [{ url: `${webhookBase}${paymentWebhookPath}`, secret: webhookSecret }] : []),
    ]
    try {
      simulator = await createPaymentSimulator({
        // across hosts the services reach it on the machine's address on their bridge
        ...(options.cluster ? { host: options.cluster.machineAddress } : {}),
        ...options.simulator,
        webhooks,
        port: simulatorPort,
        log: (line) => simulatorLog?.write(`${line}\n`),
      })
    } catch (error) {
      throw new Error(
        `the payment-provider simulator could not listen on ${simulatorPort}: ${errorText(error)}`,
      )
    }

    const authInstances = [...members.values()].filter((member) => member.service.name === identityProvider)
    // each service logs in to the engines as itself: one machine's secure engines, or a secure cluster's
    const ownUsers = secure !== undefined || options.cluster?.serviceEnv !== undefined
    const sharedEnv: NodeJS.ProcessEnv = {
      ...(ownUsers ? withoutEngineCredentials(baseEnv) : baseEnv),
      ...systemSettings,
      ...production,
      // the run's own: its services call each other's /internal/ routes with it, never with the public default
      SERVICE_CREDENTIAL: randomBytes(32).toString('base64url'),
      // the issuer of every token and of auth's OpenID provider is the public address: the run's gateway
      JWT_ISSUER: publicUrl,

      ...options.settings,
      // on secure engines each service's own user, below
      ...(ownUsers ? {} : { REDIS_URL: redisUrl }),
      KAFKA_NAMESPACE: kafkaNamespace,
      // the realtime channel's Redis keys and adapter stream: the run's own, as its topics are; on secure engines the
      // declared default, the only one realtime-gateway's ACL user may touch (the run's database number keeps its keys
      // apart, not its channels: two runs at once on one secure Redis would hear each other's adapter messages; a
      // cluster's Redis serves one run)
      ...(ownUsers ? {} : { REALTIME_REDIS_PREFIX: `${runId}:realtime:` }),
      // the provider is the simulator, which speaks Stripe's API: its keys are the defaults, or in production the run's
      STRIPE_API_BASE: simulator.url,
      // every instance of auth: a key is read from the next when one is down
      ...(auth
        ? {
            AUTH_JWKS_URL: authInstances
              .map((member) => `${baseUrlOf(member)}/.well-known/jwks.json`)
              .join(','),
          }
        : {}),
      // a service finds the others under the run's Consul names (<NAME>_SERVICE_NAME, e.g. order's inventory)
      ...Object.fromEntries(firsts().map((member) => [nameVariable(member.service.name), member.consulName])),
      GATEWAY_SERVICE_NAMES: firsts()
        .filter((member) => !member.service.isGateway)
        .map((member) => `${member.service.name}=${member.consulName}`)
        .join(','),
    }
    for (const member of firsts()) {
      const name = member.service.name
      const own = secure
        ? secureServiceEnv(secure, name, redisDatabase)
        : onRedisDatabase(options.cluster?.serviceEnv?.(name) ?? {}, redisDatabase)
      if (member.service.hasDatabase) {
        const ownUrl = own.DATABASE_URL
        member.database = await createRunDatabase(
          serverUrl,
          `${prefix}_${name.replaceAll('-', '_')}_${dbSuffix}`,
          ownUrl ? (database) => editPostgresUrl(ownUrl, { database }) : options.cluster?.databaseUrl,
          ownUrl ? name : undefined,
        )
      }
      member.env = {
        ...sharedEnv,
        ...own,
        ...(member.database ? { DATABASE_URL: member.database.url } : {}),
        CONSUL_SERVICE_NAME: member.consulName,
        // across hosts the gateways forward from their hosts' addresses: a service believes their X-Forwarded-For
        ...(hosts.length > 0 && !member.service.isGateway
          ? { TRUSTED_PROXIES: ['loopback', ...gatewayMembers.map(addressOf)].join(',') }
          : {}),
        ...options.env?.['*'],
        ...options.env?.[name],
      }
    }
    for (const member of members.values()) {
      if (member.replicaOf) member.env = member.replicaOf.env
      // across hosts, each registers with its own host's agent
      if (member.host) member.env = { ...member.env, CONSUL_HTTP_ADDR: member.host.consulAddr }
    }

    if (auth) {
      await startMember(auth)
      if (auth.database) {
        admin = { email: `admin-${runId}@example.com`, password: randomBytes(18).toString('base64url') }
        await makeAdministrator(auth.service.dir, {
          databaseUrl: auth.database.url,
          // on secure engines auth's own user, as auth itself connects
          redisUrl: auth.env.REDIS_URL ?? redisUrl,
          ...(auth.env.REDIS_TLS_CA ? { redisCaFile: auth.env.REDIS_TLS_CA } : {}),
          name: 'System administrator',
          ...admin,
        })
      }
    }
    const rest = [...members.values()].filter(
      (member) => member.service.name !== identityProvider && !member.service.isGateway,
    )
    for (const member of authInstances.filter((each) => each !== auth)) await startMember(member)
    await inBatches(rest, options.startConcurrency ?? (form === 'development' ? 2 : 4), startMember)
    for (const gatewayMember of gatewayMembers) {
      await startMember(gatewayMember)
      // the gateway routes to what it has found in Consul: wait until its merged document has each service's paths
      const gatewayUrl = baseUrlOf(gatewayMember)
      for (const member of rest.concat(auth ? [auth] : []).filter((each) => !each.replicaOf)) {
        const paths = await ownPaths(baseUrlOf(member))
        if (paths.length === 0) continue
        await waitFor(
          `${gatewayMember.key} to find ${member.consulName} in Consul`,
          async () => {
            const merged = await ownPaths(gatewayUrl)
            if (!paths.some((path) => merged.includes(path)))
              throw new Error(`no path of ${member.service.name} yet`)
          },
          { timeoutMs: 60_000, intervalMs: 250 },
        )
      }
    }
  } catch (error) {
    await close()
    throw new Error(`the system did not start: ${errorText(error)}\nlogs: ${runDir}`)
  }
  log(
    `${runId}: ${members.size} services up in ${((Date.now() - started) / 1000).toFixed(1)} s (logs in ${runDir})`,
  )

  const runningSimulator = simulator
  const firstGateway = [...members.values()].find((member) => member.service.isGateway)
  const publicGatewayUrl = firstGateway ? baseUrlOf(firstGateway) : `http://127.0.0.1:${gatewayPort}`
  return {
    runId,
    form,
    runDir,
    kafkaNamespace,
    gatewayUrl: publicGatewayUrl,
    gatewayUrls: [...members.values()].filter((member) => member.service.isGateway).map(baseUrlOf),
    simulatorUrl: runningSimulator.url,
    simulator: runningSimulator,
    admin,
    get services() {
      return Object.fromEntries(
        [...members.values()].map((member): [string, SystemServiceInfo] => [
          member.key,
          {
            name: member.service.name,
            pid: member.process?.pid,
            port: member.port,
            baseUrl: baseUrlOf(member),
            logFile: member.logFile,
            databaseUrl: (member.replicaOf ?? member).database?.url,
            consulName: member.consulName,
            host: member.host?.name,
            release: member.release,
          },
        ]),
      )
    },
    stop: (name, signal = 'SIGTERM', graceMs = 15_000) => stopMember(memberOf(name), signal, graceMs),
    kill: (name) => stopMember(memberOf(name), 'SIGKILL', 0),
    start: (name) => startMember(memberOf(name)),
    upgrade: async (name, graceMs = 15_000) => {
      const member = memberOf(name)
      if (member.release === undefined) throw new Error(`${name} runs this tree's code already`)
      const current = currentServices.find((service) => service.name === member.service.name)
      if (!current)
        throw new Error(`${name}: ${target.label} has no service ${member.service.name} to upgrade to`)
      await stopMember(member, 'SIGTERM', graceMs)
      member.service = current
      delete member.release
      await startMember(member)
      log(`${name}: moved from release ${options.release?.version} to ${target.label}`)
    },
    migrate: async (name, args = []) => {
      const member = memberOf(name)
      if (!(member.replicaOf ?? member).database) throw new Error(`${name} has no database to migrate`)
      return runServiceScript(member.service, 'migrate', args, {
        env: member.env,
        form,
        ...(member.release !== undefined ? { imageTag: member.release } : {}),
      })
    },
    logs: (name) => {
      try {
        return readFileSync(memberOf(name).logFile, 'utf8')
      } catch {
        return ''
      }
    },
    close,
  }
}
