// The public types of a run of the whole system (@meridian/infra/system): what startSystem is asked (SystemOptions,
// SystemCluster, SystemHost) and the handle it returns (MeridianSystem, SystemServiceInfo). system.ts re-exports them.
import type { PaymentSimulator, PaymentSimulatorOptions } from '../payment-simulator/index.ts'
import type { TopicReplication } from '../probes.ts'
import type { SecureMachine } from '../secure/machine.ts'
import type { ServiceHost, SystemForm } from './spawned-service.ts'

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
