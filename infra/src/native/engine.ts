// What every natively run engine offers the orchestrator.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isAlive, processStartTime, stopPid } from '../processes.ts'

/** The four engines every service needs (the test setup, the engine images and testcontainers know these). */
export type ComponentName = 'postgres' | 'kafka' | 'consul' | 'redis'
/** An engine started only when asked for: the development trace store, the development SMTP server. */
export type OptionalComponentName = 'jaeger' | 'mailpit'
export type EngineName = ComponentName | OptionalComponentName

export type Progress = (message: string) => void

export interface NativeEngine {
  readonly name: EngineName
  /** TCP ports the engine listens on; all must be free (or ours) before it starts */
  readonly ports: number[]
  readonly endpoint: string
  readonly logFile: string
  /** the pid recorded when this engine was started, while that process lives */
  runningPid(): number | undefined
  /** prepares binaries and data when missing (long steps report progress), starts the process, returns its pid */
  start(progress: Progress): Promise<number>
  /** stops the recorded process; false when there was none */
  stop(): Promise<boolean>
  /** the engine's own version; throws while it is not healthy */
  probe(): Promise<string>
  /** how long a fresh start may take before it is healthy */
  readonly startTimeoutMs: number
  /**
   * Why the running process must be started again although healthy (it runs with files this checkout has otherwise),
   * or undefined; an engine without it is reused whenever healthy.
   */
  stale?(): string | undefined
}

/**
 * The pid file of an engine we started: the only thing `down` ever stops. It records the process's start time too,
 * so that a pid the kernel has since given to another process is never taken for ours.
 */
export class PidFile {
  readonly path: string
  constructor(dir: string) {
    this.path = join(dir, 'meridian.pid')
  }
  /** the recorded pid while that very process still runs */
  live(): number | undefined {
    if (!existsSync(this.path)) return undefined
    const [pidText, startedText] = readFileSync(this.path, 'utf8').trim().split(/\s+/)
    const pid = Number(pidText)
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined
    return processStartTime(pid) === startedText ? pid : undefined
  }
  write(pid: number): void {
    writeFileSync(this.path, `${pid} ${processStartTime(pid) ?? ''}\n`)
  }
  clear(): void {
    rmSync(this.path, { force: true })
  }
  /**
   * Stops the recorded process, if it still runs, by `signal` (the engine's own way of a clean stop), killing it after
   * graceMs; false when there was none. The record goes first, so a failed stop is not retried on another's pid.
   */
  async stop(signal: NodeJS.Signals, graceMs: number): Promise<boolean> {
    const pid = this.live()
    this.clear()
    if (!pid) return false
    await stopPid(pid, signal, graceMs)
    return true
  }
}

/** Finds an executable on PATH. */
export function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir) continue
    const candidate = join(dir, command)
    if (existsSync(candidate)) return candidate
  }
  return undefined
}
