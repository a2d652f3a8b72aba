// One service as a process of its own: its main.ts under tsx (or its production build's dist/main.js under plain node,
// or its image run by podman or Docker) on a given port, its output appended to a log file, ready when /health/ready
// answers 200, stopped by the pid recorded at start and by nothing else.
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildDir, productionNodeFlags } from '../build/targets.ts'
import { infraDir, repoRoot } from '../layout.ts'
import { which } from '../native/engine.ts'
import { errorText, isAlive, run, stopPid, waitFor } from '../processes.ts'
import type { SystemService } from './services.ts'

export interface SpawnedService {
  name: string
  pid: number
  port: number
  baseUrl: string
  logFile: string
  /** the last lines it wrote (for a report when something went wrong) */
  logTail(lines?: number): string
  /** `signal` first (SIGTERM: the service drains), SIGKILL after graceMs; resolves once the process is gone */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>
}

export interface SpawnServiceOptions {
  env: NodeJS.ProcessEnv
  port: number
  /** appended to: a restarted service's lines follow the ones of its earlier life */
  logFile: string
  readyTimeoutMs?: number
  /** how often /health/ready is asked while starting; default 250 ms (a start-time measurement asks more often) */
  readyPollMs?: number
  /**
   * development (default): src/main.ts under tsx, in the service's folder; production: `node dist/main.js` in
   * build/<name> (./scripts/build), as an image runs it
   */
  form?: SystemForm
  /** the images form's tag (meridian/<name>:<tag>): a release's version for an instance that runs it; default this tree's */
  imageTag?: string
  /**
   * the host it runs on, for a run across hosts (infra/src/cluster): it listens on, and registers, the host's address,
   * and is started inside the host; default this machine's loopback
   */
  host?: ServiceHost
}

/** Where a service of a run across hosts runs: its address, and how a process is started inside it. */
export interface ServiceHost {
  name: string
  address: string
  startDaemon(options: {
    command: string
    args: string[]
    logFile: string
    cwd?: string
    env?: NodeJS.ProcessEnv
  }): number
}

/**
 * Which form of the services a run starts: their sources under tsx, the production build under plain node, or the
 * images of ./scripts/images (the same build, on their Node base) in containers with host networking.
 */
export type SystemForm = 'development' | 'production' | 'images'

export function logTail(logFile: string, lines = 30): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

/** The engine the images form runs: MERIDIAN_CONTAINER_ENGINE, else podman where it is installed, else docker. */
export function containerEngine(env: NodeJS.ProcessEnv = process.env): string {
  return env.MERIDIAN_CONTAINER_ENGINE || (which('podman') ? 'podman' : 'docker')
}

/** The tag scripts/images gives the images of this tree: the release version of the root package.json. */
export function imageTag(): string {
  return (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version
}

/**
 * The engines' addresses, and whether production may reach them in plaintext: set by the test setup, the developer's
 * shell or the run, and needed inside the container too (the image sets none of them).
 */
const endpointVariables = new Set([
  'DATABASE_URL',
  'KAFKA_BROKERS',
  'CONSUL_HTTP_ADDR',
  'CONSUL_HTTP_TOKEN',
  'CONSUL_CACERT',
  'CONSUL_CLIENT_CERT',
  'CONSUL_CLIENT_KEY',
  'REDIS_URL',
  'ENGINES_PLAINTEXT_ALLOWED',
])

/**
 * What a container is given of the environment the run composed: the variables the run set (those it did not take
 * unchanged from this process, whose PATH, HOME or NODE_OPTIONS would replace the image's), the engines' addresses,
 * and tracing's OTEL_* (the trace store's address and the sampling a run is traced with, as for the other forms).
 */
export function containerEnv(
  env: NodeJS.ProcessEnv,
  host: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const given: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined || !/^[A-Z][A-Z0-9_]*$/.test(key)) continue
    if (endpointVariables.has(key) || key.startsWith('OTEL_') || host[key] !== value) given[key] = value
  }
  return given
}

/** `<engine> run` of the service's image as compose runs it: host networking, read-only, uid 10001, /tmp in memory. */
function containerCommand(
  service: Pick<SystemService, 'name'>,
  env: Record<string, string>,
  containerName: string,
  tag: string,
  command: readonly string[] = ['dist/main.js'],
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const args = ['run', '--rm', '--name', containerName, '--network', 'host', '--read-only', '--tmpfs', '/tmp']
  args.push('--user', '10001:10001', '--stop-timeout', '35')
  for (const [key, value] of Object.entries(env)) args.push('--env', `${key}=${value}`)
  args.push(`meridian/${service.name}:${tag}`, 'node', ...command)
  return {
    command: containerEngine(),
    args,
    // podman's settings of the project (runc, host networking, this machine's ulimits); Docker does not read it
    env: { ...process.env, CONTAINERS_CONF: join(infraDir, 'containers', 'containers.conf') },
  }
}

/** Removes the container of that name, if there is one (a run that was killed may have left it). */
function removeContainer(name: string): void {
  spawnSync(containerEngine(), ['rm', '--force', name], {
    env: { ...process.env, CONTAINERS_CONF: join(infraDir, 'containers', 'containers.conf') },
    stdio: 'ignore',
  })
}

/** The kit's tracing preload as a service resolves it (each service depends on @meridian/service-kit). */
const tracingPreloadSpecifier = '@meridian/service-kit/tracing/preload'

function commandOf(service: Pick<SystemService, 'name' | 'dir' | 'entry'>, form: SystemForm) {
  // node --import tsx: one process (the tsx command would put a second one between us and the service)
  // the kit's tracing preload next: it must be in place before the service's modules load (docs/how-to/operations.md)
  if (form === 'development') {
    return { args: ['--import', 'tsx', '--import', tracingPreloadSpecifier, service.entry], cwd: service.dir }
  }
  const cwd = join(buildDir, service.name)
  if (!existsSync(join(cwd, 'dist', 'main.js'))) {
    throw new Error(
      `${service.name}: build/${service.name}/dist/main.js is missing (./scripts/build ${service.name})`,
    )
  }
  return { args: [...productionNodeFlags, 'dist/main.js'], cwd }
}

/**
 * A service's one-off command beside its instances — `migrate` and its arguments — in the run's form, with an
 * instance's environment: src/<script>.ts under tsx, the build's dist/<script>.js under node, or the image's in a
 * container of its own (as compose's `<service>-migrate` runs it). Resolves with what it printed; throws when it fails.
 */
export async function runServiceScript(
  service: Pick<SystemService, 'name' | 'dir'>,
  script: 'migrate',
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; form?: SystemForm; imageTag?: string },
): Promise<string> {
  const form = options.form ?? 'development'
  if (form === 'images') {
    const name = `meridian-${service.name}-${script}-${randomBytes(4).toString('hex')}`
    const tag = options.imageTag ?? imageTag()
    const container = containerCommand(service, containerEnv(options.env), name, tag, [
      `dist/${script}.js`,
      ...args,
    ])
    return run(container.command, container.args, { env: container.env })
  }
  if (form === 'production')
    return run(process.execPath, [...productionNodeFlags, `dist/${script}.js`, ...args], {
      cwd: join(buildDir, service.name),
      env: options.env,
    })
  return run(process.execPath, ['--import', 'tsx', join('src', `${script}.ts`), ...args], {
    cwd: service.dir,
    env: options.env,
  })
}

/** Starts the service and resolves once it is ready; a service that does not get ready is stopped and reported. */
export async function spawnService(
  service: Pick<SystemService, 'name' | 'dir' | 'entry'>,
  options: SpawnServiceOptions,
): Promise<SpawnedService> {
  const { port, logFile } = options
  const form = options.form ?? 'development'
  const address = options.host?.address ?? '127.0.0.1'
  const env = { ...options.env, PORT: String(port), HOST: address, SERVICE_HOST: address }
  if (options.host && form === 'images')
    throw new Error(
      `${service.name}: a run across hosts starts the development or production form, not images`,
    )
  const log = openSync(logFile, 'a')
  // one container per member: its name says whose it is, and is what a stop removes should the client be killed
  const containerName = `meridian-system-${service.name}-${port}`
  let child: ReturnType<typeof spawn> | undefined
  let inHost: number | undefined
  if (form === 'images') {
    removeContainer(containerName)
    const container = containerCommand(
      service,
      containerEnv(env),
      containerName,
      options.imageTag ?? imageTag(),
    )
    // the engine's client stays in the foreground: its output is the service's, and a signal to it reaches node
    child = spawn(container.command, container.args, { env: container.env, stdio: ['ignore', log, log] })
  } else if (options.host) {
    closeSync(log)
    const { args, cwd } = commandOf(service, form)
    inHost = options.host.startDaemon({ command: process.execPath, args, cwd, env, logFile })
  } else {
    const { args, cwd } = commandOf(service, form)
    child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', log, log] })
  }
  if (!options.host) closeSync(log)
  const pid = inHost ?? child?.pid
  if (pid === undefined) throw new Error(`${service.name}: the process did not start`)
  child?.unref()
  const baseUrl = `http://${address}:${port}`
  const started: SpawnedService = {
    name: service.name,
    pid,
    port,
    baseUrl,
    logFile,
    logTail: (lines) => logTail(logFile, lines),
    // a service drains on SIGTERM (it turns not-ready and finishes in-flight requests); 15 s is plenty here
    stop: async (signal = 'SIGTERM', graceMs = 15_000) => {
      await stopPid(pid, signal, graceMs)
      // a client killed before its container ended leaves it running: removed by the name this member gave it
      if (form === 'images') removeContainer(containerName)
    },
  }
  try {
    await waitFor(
      `${service.name} (${baseUrl}/health/ready)`,
      async () => {
        const response = await fetch(`${baseUrl}/health/ready`, { signal: AbortSignal.timeout(2000) })
        await response.arrayBuffer()
        if (response.status !== 200) throw new Error(`answered ${response.status}`)
      },
      {
        timeoutMs: options.readyTimeoutMs ?? 90_000,
        intervalMs: options.readyPollMs ?? 250,
        alive: () => isAlive(pid),
      },
    )
  } catch (error) {
    await started.stop()
    throw new Error(`${errorText(error)}\n--- last lines of ${logFile} ---\n${started.logTail()}`)
  }
  return started
}
