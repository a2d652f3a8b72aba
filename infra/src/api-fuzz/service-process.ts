// One service of the fuzzing run as a process of its own: its main.ts under tsx on a free port, its output in a log
// file, ready when /health/ready answers 200, stopped by the pid recorded at start and by nothing else.
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { freePort } from '../free-port.ts'
import { errorText, isAlive, stopPid, waitFor } from '../processes.ts'
import type { FuzzedService } from './services.ts'

export interface ServiceProcess {
  name: string
  pid: number
  port: number
  baseUrl: string
  logFile: string
  /** the last lines it wrote (for a report when something went wrong) */
  logTail(lines?: number): string
  stop(): Promise<void>
}

export async function startServiceProcess(
  service: FuzzedService,
  options: { env: NodeJS.ProcessEnv; logFile: string; readyTimeoutMs?: number },
): Promise<ServiceProcess> {
  const port = await freePort()
  const log = openSync(options.logFile, 'a')
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
    logFile: options.logFile,
    logTail(lines = 30) {
      try {
        return readFileSync(options.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
      } catch {
        return ''
      }
    },
    // a service drains on SIGTERM (it turns not-ready and finishes in-flight requests); 15 s is plenty here
    stop: () => stopPid(pid, 'SIGTERM', 15_000),
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
    throw new Error(`${errorText(error)}\n--- last lines of ${options.logFile} ---\n${started.logTail()}`)
  }
  return started
}
