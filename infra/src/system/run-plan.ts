// The plan of a run of the whole system, made before anything of it starts: the engines' endpoints of baseEnv and
// their checks, the form and the gateway's port, the services it runs (only, release, upgradeTo), their builds, and
// the run's id, log folder, Kafka namespace and database suffix.
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { type KafkaSecurity, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { consulSettingsFromEnv } from '../consul-http.ts'
import { freePort } from '../free-port.ts'
import { layoutFromEnv, repoRoot } from '../layout.ts'
import { PortInUseError, tcpListener } from '../processes.ts'
import { type SecureMachine, secureMachineOfEnv } from '../secure/machine.ts'
import type { ConsulSettings } from './consul-instances.ts'
import { buildImages, buildServices, systemFormFromEnv } from './production.ts'
import { systemRedisDatabase, withRedisDatabase } from './redis-database.ts'
import { discoverServices, type SystemService } from './services.ts'
import type { SystemForm } from './spawned-service.ts'
import type { SystemHost, SystemOptions } from './system-types.ts'

/** The engines of a run, from baseEnv: the administrator's endpoints, with which the run's own things are made. */
export interface RunEngines {
  baseEnv: NodeJS.ProcessEnv
  /** baseEnv's DATABASE_URL: the server the run's databases are created on */
  serverUrl: string
  brokers: string
  consul: ConsulSettings
  redisDatabase: number
  /** baseEnv's REDIS_URL on the run's database number */
  redisUrl: string
  /** a secure broker's TLS and SASL, the administrator's, for the run's topics (none for a plaintext one) */
  kafkaSecurity: KafkaSecurity
  /** the machine's secure engines, when the run is on them (SystemOptions.secureEngines) */
  secure: SecureMachine | undefined
}

/** The services of a run, and what upgrade(name) moves one of its instances to. */
export interface RunServices {
  /** the services the run starts: auth first, the gateway last */
  services: SystemService[]
  /** what a member started from the release moves to: this tree (or upgradeTo's) */
  target: { label: string; root: string }
  /** the target's services, listed once */
  currentServices: SystemService[]
}

/** The names of a run: its id, the folder of its logs, its Kafka namespace and the suffix of its databases' names. */
export interface RunNames {
  runId: string
  runDir: string
  kafkaNamespace: string
  dbSuffix: string
}

/** Everything a run is decided by before it starts anything. */
export interface RunPlan extends RunEngines, RunServices, RunNames {
  options: SystemOptions
  /** progress lines */
  log: (line: string) => void
  prefix: string
  form: SystemForm
  gatewayPort: number
  /** the hosts of a run across hosts; none on one machine */
  hosts: SystemHost[]
}

function requireEnv(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name]
  if (!value)
    throw new Error(
      `${name} is not set: the system needs the engines (./scripts/infra up; eval "$(./scripts/infra env)")`,
    )
  return value
}

/** The engines of baseEnv; throws when one of their endpoints is not set. */
async function enginesOf(baseEnv: NodeJS.ProcessEnv, options: SystemOptions): Promise<RunEngines> {
  const serverUrl = requireEnv(baseEnv, 'DATABASE_URL')
  const brokers = requireEnv(baseEnv, 'KAFKA_BROKERS')
  const consul: ConsulSettings = consulSettingsFromEnv(baseEnv, requireEnv(baseEnv, 'CONSUL_HTTP_ADDR'))
  const redisDatabase = options.redisDatabase ?? systemRedisDatabase
  const redisUrl = withRedisDatabase(requireEnv(baseEnv, 'REDIS_URL'), redisDatabase)
  // a secure broker's TLS and SASL, the administrator's, for the run's topics (none for a plaintext one)
  const kafkaSecurity: KafkaSecurity = kafkaSecurityFromEnv(baseEnv)
  const secure = options.secureEngines ?? (await secureMachineOfEnv(baseEnv))
  return { baseEnv, serverUrl, brokers, consul, redisDatabase, redisUrl, kafkaSecurity, secure }
}

/** The services of the run (release's or this tree's, `only` of them); throws on a form or name it cannot run. */
function servicesOf(options: SystemOptions, form: SystemForm): RunServices {
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
  return { services, target, currentServices }
}

/** Builds what the form runs: the images (images form) or the builds (production form) of the services. */
function buildForm(form: SystemForm, services: SystemService[], log: (line: string) => void): void {
  if (form === 'images') {
    log(`images form: ./scripts/images ${services.map((service) => service.name).join(' ')}`)
    buildImages(services.map((service) => service.name))
  }
  if (form === 'production') {
    log(`production form: ./scripts/build ${services.map((service) => service.name).join(' ')}`)
    buildServices(services.map((service) => service.name))
  }
}

/** A new run's names, and its log folder made. */
function runNames(prefix: string, baseEnv: NodeJS.ProcessEnv): RunNames {
  const runId = `${prefix.replaceAll('_', '-')}-${Date.now().toString(36)}${randomBytes(2).toString('hex')}`
  const runDir = join(layoutFromEnv(baseEnv).componentDir('system'), runId)
  mkdirSync(runDir, { recursive: true })
  const kafkaNamespace = `${runId}.`
  const dbSuffix = runId.slice(prefix.length + 1)
  return { runId, runDir, kafkaNamespace, dbSuffix }
}

/**
 * The plan of a run of these options: the engines of baseEnv (throws when one is not set), the checked prefix, form
 * and services, the gateway's port (throws when someone listens there already), the form's builds, the run's names.
 */
export async function planRun(options: SystemOptions): Promise<RunPlan> {
  const baseEnv = options.baseEnv ?? process.env
  const log = options.log ?? ((line: string) => process.stderr.write(`[system] ${line}\n`))
  const engines = await enginesOf(baseEnv, options)
  const prefix = options.prefix ?? 'system'
  if (!/^[a-z][a-z0-9_]*$/.test(prefix))
    throw new Error(`prefix must be lower-case letters, digits and _ (got '${prefix}')`)
  const form = options.form ?? systemFormFromEnv(baseEnv)
  // across hosts each gateway has its host's 8080
  const gatewayPort =
    options.gatewayPort ?? (form === 'development' || options.cluster ? 8080 : await freePort())
  const runServices = servicesOf(options, form)
  const gateway = runServices.services.find((service) => service.isGateway)
  if (gateway && !options.cluster) {
    // the gateway listens on 127.0.0.1: a listener on another address (a cluster campaign's proxy on a test host's
    // address, running beside) holds the same port number without keeping it from the gateway
    const holder = tcpListener(gatewayPort, '127.0.0.1')
    if (holder) throw new PortInUseError(`the system's gateway`, holder)
  }
  buildForm(form, runServices.services, log)
  const hosts = options.cluster?.hosts ?? []
  return {
    ...engines,
    ...runServices,
    ...runNames(prefix, baseEnv),
    options,
    log,
    prefix,
    form,
    gatewayPort,
    hosts,
  }
}
