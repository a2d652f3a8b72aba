// Native processes: start detached daemons, tell whether a pid lives, stop it by that pid, find who holds a port.
import { type SpawnOptions, spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

export interface DaemonOptions {
  command: string
  args: string[]
  logFile: string
  cwd?: string
  env?: NodeJS.ProcessEnv
  uid?: number
  gid?: number
}

/** Starts a process that outlives this one; its output goes to logFile. Returns its pid. */
export function startDaemon(options: DaemonOptions): number {
  const log = openSync(options.logFile, 'a')
  try {
    const spawnOptions: SpawnOptions = {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['ignore', log, log],
    }
    if (options.uid !== undefined) spawnOptions.uid = options.uid
    if (options.gid !== undefined) spawnOptions.gid = options.gid
    const child = spawn(options.command, options.args, spawnOptions)
    if (child.pid === undefined) throw new Error(`could not start ${options.command}`)
    child.unref()
    return child.pid
  } finally {
    closeSync(log)
  }
}

export interface RunOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  uid?: number
  gid?: number
  /** pass the child's output through to ours (progress of long steps) */
  showOutput?: boolean
  /** kill the command after this long */
  timeoutMs?: number
}

/** Runs a command to completion; rejects with its output when it fails. */
export function run(command: string, args: string[], options: RunOptions = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const spawnOptions: SpawnOptions = {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }
    if (options.timeoutMs !== undefined) spawnOptions.timeout = options.timeoutMs
    if (options.uid !== undefined) spawnOptions.uid = options.uid
    if (options.gid !== undefined) spawnOptions.gid = options.gid
    const child = spawn(command, args, spawnOptions)
    let output = ''
    const collect = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
      output += chunk.toString()
      if (options.showOutput) stream.write(chunk)
    }
    child.stdout?.on('data', collect(process.stderr))
    child.stderr?.on('data', collect(process.stderr))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0) resolvePromise(output)
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}\n${output.slice(-4000)}`))
    })
  })
}

/**
 * Runs a command to completion with its output (both streams) appended to `logFile`, for long steps whose every line
 * nobody reads unless they fail: rejects with the log's last lines then.
 */
export function runLogged(
  command: string,
  args: string[],
  options: Omit<RunOptions, 'showOutput'> & { logFile: string },
): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const log = openSync(options.logFile, 'a')
    const spawnOptions: SpawnOptions = {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', log, log],
    }
    if (options.timeoutMs !== undefined) spawnOptions.timeout = options.timeoutMs
    if (options.uid !== undefined) spawnOptions.uid = options.uid
    if (options.gid !== undefined) spawnOptions.gid = options.gid
    const child = spawn(command, args, spawnOptions)
    closeSync(log)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      if (code === 0) return resolvePromise()
      const tail = logTail(options.logFile, 25)
      reject(
        new Error(
          `${command} ${args.join(' ')} exited with ${code ?? signal}; the last lines of ${options.logFile}:\n${tail}`,
        ),
      )
    })
  })
}

/** The last `lines` lines of a log file ('' when it does not exist): what a failure's message shows of it. */
export function logTail(file: string, lines: number): string {
  return existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : ''
}

export function isAlive(pid: number | undefined): pid is number {
  if (!pid) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  // a zombie still answers kill(0); it is not alive for our purposes
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return true
  }
}

/** Stops the process with this pid: `signal` first, SIGKILL after `graceMs`. */
export async function stopPid(
  pid: number,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 20_000,
): Promise<void> {
  if (!isAlive(pid)) return
  process.kill(pid, signal)
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return
    await sleep(100)
  }
  if (isAlive(pid)) process.kill(pid, 'SIGKILL')
  while (isAlive(pid)) await sleep(50)
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T>,
  {
    timeoutMs = 60_000,
    intervalMs = 250,
    alive,
  }: { timeoutMs?: number; intervalMs?: number; alive?: () => boolean } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  while (Date.now() < deadline) {
    try {
      return await probe()
    } catch (error) {
      lastError = error
    }
    if (alive && !alive())
      throw new Error(`${what}: the process exited while starting (${errorText(lastError)})`)
    await sleep(intervalMs)
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms (${errorText(lastError)})`)
}

export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

export interface PortHolder {
  port: number
  pid?: number
  command?: string
}

/**
 * Whether a listener's local address (as /proc/net/tcp and tcp6 write it, in hex) keeps 127.0.0.1 on its port from
 * being bound: 127.0.0.1 itself, any IPv4 address, any IPv6 address (dual stack) or ::ffff:127.0.0.1. A listener on
 * another address (a test host's 198.18.x.y in a cluster campaign) does not.
 */
function conflictsWithLoopback(hexAddress: string): boolean {
  return ['0100007F', '00000000', '0'.repeat(32), '0000000000000000FFFF00000100007F'].includes(
    hexAddress.toUpperCase(),
  )
}

/**
 * Who listens on this TCP port (IPv4 or IPv6), read from /proc so that no tool is needed; with `bindAddress`, only a
 * listener that keeps that address from being bound on the port.
 * Returns undefined when nobody listens.
 */
export function tcpListener(port: number, bindAddress?: '127.0.0.1'): PortHolder | undefined {
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(table, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      const local = fields[1]
      if (!local || fields[3] !== '0A') continue // 0A = LISTEN
      const [address = '', portHex = ''] = local.split(':')
      if (bindAddress && !conflictsWithLoopback(address)) continue
      if (Number.parseInt(portHex, 16) === port && fields[9]) inodes.add(fields[9])
    }
  }
  if (inodes.size === 0) return undefined
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${entry}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      let target: string
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`)
      } catch {
        continue
      }
      const match = /^socket:\[(\d+)\]$/.exec(target)
      if (match?.[1] && inodes.has(match[1])) {
        const pid = Number(entry)
        return { port, pid, command: commandLine(pid) }
      }
    }
  }
  return { port }
}

/** Start time of a process in clock ticks since boot (/proc/<pid>/stat field 22): with the pid, it names one process. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

export function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 200)
  } catch {
    return undefined
  }
}

/** pid plus its descendants: a listener may be a child of the process we started */
export function isSameOrDescendant(candidate: number, ancestor: number): boolean {
  let current: number | undefined = candidate
  for (let depth = 0; current && current > 1 && depth < 16; depth++) {
    if (current === ancestor) return true
    try {
      const stat: string = readFileSync(`/proc/${current}/stat`, 'utf8')
      current = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    } catch {
      return false
    }
  }
  return false
}

export class PortInUseError extends Error {
  constructor(component: string, holder: PortHolder) {
    const who = holder.pid
      ? `process ${holder.pid} (${holder.command ?? 'unknown command'})`
      : 'a process this user cannot see'
    super(
      `${component}: port ${holder.port} is already held by ${who}. ` +
        `Stop that process, or point Meridian at it through the environment (see docs/reference/configuration.md).`,
    )
    this.name = 'PortInUseError'
  }
}

/** Throws PortInUseError for the first port someone other than `owner` listens on. */
export function assertPortsFree(component: string, ports: number[], owner?: number): void {
  for (const port of ports) {
    const holder = tcpListener(port)
    if (!holder) continue
    if (owner && holder.pid && isSameOrDescendant(holder.pid, owner)) continue
    throw new PortInUseError(component, holder)
  }
}
