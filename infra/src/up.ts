// Bringing the engines up: plaintext (`scripts/infra up`, the test setup) or the machine's secure ones (`up --secure`),
// one `up` at a time per cache folder, then the service databases and the declared topics provisioned.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type KafkaSecurity, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { withDirLock } from './dir-lock.ts'
import { composeUp } from './docker.ts'
import { type Layout, layoutFromEnv } from './layout.ts'
import type { ComponentName, NativeEngine, Progress } from './native/engine.ts'
import {
  components,
  type Endpoints,
  type EnginePlan,
  endpointsOf,
  type InfraOptions,
  kafkaSecurityOf,
  nativeEngines,
  planInfra,
  planMail,
  planTraceStore,
  probeOf,
} from './plan.ts'
import {
  createDatabases,
  createTopics,
  kafkaCluster,
  replicationForBrokers,
  serviceDatabases,
} from './probes.ts'
import { assertPortsFree, errorText, isAlive, waitFor } from './processes.ts'
import {
  runningSecureEngines,
  type SecureMachine,
  type SecureUpOptions,
  securePortList,
  securePortsFromEnv,
  secureStateDir,
  upSecureEngines,
} from './secure/machine.ts'
import { expandTopics, loadTopicDeclaration } from './topics.ts'

/** One `up` at a time per cache folder: tests and scripts may call it together. */
export async function withLock<T>(layout: Layout, progress: Progress, work: () => Promise<T>): Promise<T> {
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

export const stderrProgress: Progress = (message) => process.stderr.write(`[infra] ${message}\n`)

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
