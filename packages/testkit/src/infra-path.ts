// Which way the test global setup obtains the engines, in docs/explanation/architecture.md's order: endpoints given in the environment,
// else a Docker engine that answers (testcontainers), else native processes (infra/, as `scripts/infra up`).
import { existsSync, readFileSync } from 'node:fs'
import { request as httpRequest, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { homedir, userInfo } from 'node:os'
import { join } from 'node:path'
import { type ComponentName, components, endpointVariable } from '@meridian/infra'

export type InfraPath = 'environment' | 'docker' | 'native'

export interface DockerProbe {
  answered: boolean
  /** the engine that answered, as DOCKER_HOST names it: unix:///var/run/docker.sock, tcp://host:2376 */
  host?: string
  /** where it answered, or what was tried and why nothing answered */
  detail: string
}

export interface PathChoice {
  path: InfraPath
  /** engines this path provides; the others are used as their environment variable gives them */
  missing: ComponentName[]
  /** why this path, in a few words */
  reason: string
  /** the probe's answer, when one was asked */
  docker?: DockerProbe
}

/** MERIDIAN_INFRA as the test setup reads it; unset or empty is `auto`. */
export function wantedInfra(env: NodeJS.ProcessEnv): 'auto' | 'docker' | 'native' {
  const wanted = env.MERIDIAN_INFRA || 'auto'
  if (wanted === 'auto' || wanted === 'docker' || wanted === 'native') return wanted
  throw new Error(`MERIDIAN_INFRA must be auto, docker or native (got '${wanted}')`)
}

/**
 * Chooses the path from the environment and, only when the choice depends on it, the Docker probe. Endpoints in the
 * environment win (for the engines they name); MERIDIAN_INFRA=native never probes; MERIDIAN_INFRA=docker fails when
 * no engine answers rather than quietly running native.
 */
export async function chooseInfraPath(
  env: NodeJS.ProcessEnv,
  probe: () => Promise<DockerProbe>,
): Promise<PathChoice> {
  const wanted = wantedInfra(env)
  const missing = components.filter((name) => !env[endpointVariable[name]])
  if (missing.length === 0) {
    return { path: 'environment', missing, reason: 'every endpoint is given in the environment' }
  }
  if (wanted === 'native') return { path: 'native', missing, reason: 'MERIDIAN_INFRA=native' }
  const docker = await probe()
  if (docker.answered) {
    return {
      path: 'docker',
      missing,
      reason: wanted === 'docker' ? 'MERIDIAN_INFRA=docker' : 'a Docker engine answered',
      docker,
    }
  }
  if (wanted === 'docker') {
    throw new Error(
      `MERIDIAN_INFRA=docker, but no Docker engine answered (${docker.detail}). ` +
        'Start Docker or point DOCKER_HOST at an engine (./scripts/engine-images run <command> does, with podman), ' +
        'or unset MERIDIAN_INFRA to use the native engines.',
    )
  }
  return { path: 'native', missing, reason: 'no Docker engine answered', docker }
}

/** The unix sockets a local Docker engine listens on, where testcontainers looks for them too. */
export function dockerSocketCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = homedir()
  return [
    '/var/run/docker.sock',
    ...(env.XDG_RUNTIME_DIR ? [join(env.XDG_RUNTIME_DIR, 'docker.sock')] : []),
    join(home, '.docker', 'run', 'docker.sock'),
    join(home, '.docker', 'desktop', 'docker.sock'),
    join('/run', 'user', String(userInfo().uid), 'docker.sock'),
  ].filter((socket, index, all) => all.indexOf(socket) === index)
}

export interface DockerProbeOptions {
  /** the whole probe's budget */
  timeoutMs?: number
  /** where to look when DOCKER_HOST is unset */
  sockets?: string[]
}

/**
 * Whether a Docker engine answers `GET /_ping` with OK: at DOCKER_HOST when it is set (unix:// or tcp://, TLS with
 * DOCKER_TLS_VERIFY), else at the first existing local socket. Never throws; without a socket it answers at once.
 */
export async function probeDocker(
  env: NodeJS.ProcessEnv = process.env,
  options: DockerProbeOptions = {},
): Promise<DockerProbe> {
  const deadline = Date.now() + (options.timeoutMs ?? 300)
  const given = env.DOCKER_HOST
  if (given) {
    const target = dockerHostTarget(given, env)
    if (typeof target === 'string') return { answered: false, detail: `DOCKER_HOST=${given}: ${target}` }
    const failure = await ping(target, deadline - Date.now())
    return failure
      ? { answered: false, detail: `DOCKER_HOST=${given}: ${failure}` }
      : { answered: true, host: given, detail: given }
  }
  const sockets = (options.sockets ?? dockerSocketCandidates(env)).filter((socket) => existsSync(socket))
  if (sockets.length === 0)
    return { answered: false, detail: 'DOCKER_HOST is unset and there is no Docker socket' }
  const failures: string[] = []
  for (const socketPath of sockets) {
    const failure = await ping({ options: { socketPath }, secure: false }, deadline - Date.now())
    if (!failure) return { answered: true, host: `unix://${socketPath}`, detail: socketPath }
    failures.push(`${socketPath}: ${failure}`)
  }
  return { answered: false, detail: failures.join('; ') }
}

interface PingTarget {
  options: RequestOptions
  secure: boolean
}

/** How to reach the engine DOCKER_HOST names, or why it cannot be probed. */
function dockerHostTarget(dockerHost: string, env: NodeJS.ProcessEnv): PingTarget | string {
  if (dockerHost.startsWith('unix://')) return { options: { socketPath: dockerHost.slice(7) }, secure: false }
  if (!dockerHost.startsWith('tcp://')) return 'only unix:// and tcp:// engines are probed'
  let url: URL
  try {
    url = new URL(`http://${dockerHost.slice(6)}`)
  } catch {
    return 'not a host:port'
  }
  const secure = Boolean(env.DOCKER_TLS_VERIFY) && env.DOCKER_TLS_VERIFY !== '0'
  const options: RequestOptions = { host: url.hostname, port: url.port || (secure ? 2376 : 2375) }
  if (!secure) return { options, secure }
  const certDir = env.DOCKER_CERT_PATH || join(homedir(), '.docker')
  try {
    const read = (file: string) => readFileSync(join(certDir, file))
    return {
      options: {
        ...options,
        ca: read('ca.pem'),
        cert: read('cert.pem'),
        key: read('key.pem'),
      } as RequestOptions,
      secure,
    }
  } catch (error) {
    return `DOCKER_TLS_VERIFY is set but the certificates in ${certDir} cannot be read (${(error as Error).message})`
  }
}

/** undefined when the engine answered OK in time, else why not. */
function ping(target: PingTarget, timeoutMs: number): Promise<string | undefined> {
  if (timeoutMs <= 0) return Promise.resolve('no time left to ask')
  return new Promise((resolve) => {
    const send = target.secure ? httpsRequest : httpRequest
    const request = send({ ...target.options, method: 'GET', path: '/_ping' }, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        body += chunk
      })
      response.on('end', () => {
        clearTimeout(timer)
        resolve(response.statusCode === 200 ? undefined : `answered ${response.statusCode} ${body.trim()}`)
      })
      response.on('error', (error) => {
        clearTimeout(timer)
        resolve(error.message)
      })
    })
    const timer = setTimeout(() => {
      request.destroy()
      resolve(`no answer within ${timeoutMs} ms`)
    }, timeoutMs)
    request.on('error', (error) => {
      clearTimeout(timer)
      resolve((error as NodeJS.ErrnoException).code ?? error.message)
    })
    request.end()
  })
}

/** The line that says which path ran (`summary`: what the Docker path started). */
export function describeInfraPath(choice: PathChoice, summary: string[] = []): string {
  const given = components
    .filter((name) => !choice.missing.includes(name))
    .map((name) => endpointVariable[name])
  const fromEnvironment = given.length > 0 ? `; from the environment: ${given.join(', ')}` : ''
  switch (choice.path) {
    case 'environment':
      return `[testkit] infrastructure: from the environment (${given.join(', ')})`
    case 'docker':
      return `[testkit] infrastructure: docker (testcontainers, ${choice.reason}, ${choice.docker?.detail}): ${summary.join(', ')}${fromEnvironment}`
    case 'native':
      return `[testkit] infrastructure: native engines (infra/, ${choice.reason}): ${choice.missing.join(', ')}${fromEnvironment}`
  }
}
