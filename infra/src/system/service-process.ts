// One service as a process of its own: its main.ts under tsx (or its production build's dist/main.js under plain node)
// on a given port, its output appended to a log file, ready when /health/ready answers 200, stopped by the pid
// recorded at start and by nothing else.
import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildDir, productionNodeFlags } from '../build/targets.ts'
import { errorText, isAlive, stopPid, waitFor } from '../processes.ts'
import type { SystemService } from './services.ts'

export interface ServiceProcess {
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

export interface ServiceProcessOptions {
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
}

/** Which form of the services a run starts: their sources under tsx, or the production build under plain node. */
export type SystemForm = 'development' | 'production'

export function logTail(logFile: string, lines = 30): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

function commandOf(service: Pick<SystemService, 'name' | 'dir' | 'entry'>, form: SystemForm) {
  // node --import tsx: one process (the tsx command would put a second one between us and the service)
  if (form === 'development') return { args: ['--import', 'tsx', service.entry], cwd: service.dir }
  const cwd = join(buildDir, service.name)
  if (!existsSync(join(cwd, 'dist', 'main.js'))) {
    throw new Error(
      `${service.name}: build/${service.name}/dist/main.js is missing (./scripts/build ${service.name})`,
    )
  }
  return { args: [...productionNodeFlags, 'dist/main.js'], cwd }
}

/** Starts the service and resolves once it is ready; a service that does not get ready is stopped and reported. */
export async function startServiceProcess(
  service: Pick<SystemService, 'name' | 'dir' | 'entry'>,
  options: ServiceProcessOptions,
): Promise<ServiceProcess> {
  const { port, logFile } = options
  const log = openSync(logFile, 'a')
  const { args, cwd } = commandOf(service, options.form ?? 'development')
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...options.env, PORT: String(port), HOST: '127.0.0.1', SERVICE_HOST: '127.0.0.1' },
    stdio: ['ignore', log, log],
  })
  closeSync(log)
  const pid = child.pid
  if (pid === undefined) throw new Error(`${service.name}: the process did not start`)
  child.unref()
  const baseUrl = `http://127.0.0.1:${port}`
  const started: ServiceProcess = {
    name: service.name,
    pid,
    port,
    baseUrl,
    logFile,
    logTail: (lines) => logTail(logFile, lines),
    // a service drains on SIGTERM (it turns not-ready and finishes in-flight requests); 15 s is plenty here
    stop: (signal = 'SIGTERM', graceMs = 15_000) => stopPid(pid, signal, graceMs),
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
