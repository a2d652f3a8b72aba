// One service as a process of its own: its main.ts under tsx on a given port, its output appended to a log file,
// ready when /health/ready answers 200, stopped by the pid recorded at start and by nothing else.
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
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
}

export function logTail(logFile: string, lines = 30): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

/** Starts the service and resolves once it is ready; a service that does not get ready is stopped and reported. */
export async function startServiceProcess(
  service: Pick<SystemService, 'name' | 'dir' | 'entry'>,
  options: ServiceProcessOptions,
): Promise<ServiceProcess> {
  const { port, logFile } = options
  const log = openSync(logFile, 'a')
  // node --import tsx: one process (the tsx command would put a second one between us and the service)
  const child = spawn(process.execPath, ['--import', 'tsx', service.entry], {
    cwd: service.dir,
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
      { timeoutMs: options.readyTimeoutMs ?? 90_000, intervalMs: 250, alive: () => isAlive(pid) },
    )
  } catch (error) {
    await started.stop()
    throw new Error(`${errorText(error)}\n--- last lines of ${logFile} ---\n${started.logTail()}`)
  }
  return started
}
