// What every natively run engine offers the orchestrator.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isAlive } from '../processes.ts'

export type ComponentName = 'postgres' | 'kafka' | 'consul' | 'redis'

export type Progress = (message: string) => void

export interface NativeEngine {
  readonly name: ComponentName
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
}

/** The pid file of an engine we started: the only thing `down` ever stops. */
export class PidFile {
  readonly path: string
  constructor(dir: string) {
    this.path = join(dir, 'meridian.pid')
  }
  read(): number | undefined {
    if (!existsSync(this.path)) return undefined
    const pid = Number(readFileSync(this.path, 'utf8').trim())
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  }
  live(): number | undefined {
    const pid = this.read()
    return isAlive(pid) ? pid : undefined
  }
  write(pid: number): void {
    writeFileSync(this.path, `${pid}\n`)
  }
  clear(): void {
    rmSync(this.path, { force: true })
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
