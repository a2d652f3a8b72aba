// A process this benchmark starts (the auth service, the gateway, nginx): ready when an HTTP probe answers 200,
// stopped by the pid recorded at start and by nothing else.
import { type ChildProcess, spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'

export interface StartedProcess {
  name: string
  pid: number
  /** whether the process has exited (on its own or stopped) */
  hasExited(): boolean
  /** `signal`, then SIGKILL after graceMs; `alsoKill`: pids of its children to kill too if it had to be killed */
  stop(options?: { signal?: NodeJS.Signals; graceMs?: number; alsoKill?: () => number[] }): Promise<void>
}

export interface StartOptions {
  name: string
  command: string
  args: string[]
  env: NodeJS.ProcessEnv
  cwd?: string
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })

export function startProcess({ name, command, args, env, cwd }: StartOptions): Promise<StartedProcess> {
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'inherit', 'inherit'] })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('spawn', () => {
      const pid = child.pid
      if (pid === undefined) return reject(new Error(`${name}: the process did not start`))
      let stopping: Promise<void> | undefined
      resolve({
        name,
        pid,
        hasExited: () => child.exitCode !== null || child.signalCode !== null,
        stop({ signal = 'SIGTERM', graceMs = 10_000, alsoKill } = {}) {
          stopping ??= (async () => {
            if (child.exitCode !== null || child.signalCode !== null) return
            const children = alsoKill?.() ?? []
            try {
              process.kill(pid, signal)
            } catch {
              // it exited meanwhile (Ctrl-C reaches the whole process group): nothing left to stop
              return
            }
            const deadline = sleep(graceMs, 'late' as const, { ref: false })
            if ((await Promise.race([exited(child), deadline])) === 'late') {
              for (const other of [pid, ...children]) {
                try {
                  process.kill(other, 'SIGKILL')
                } catch {
                  // already gone
                }
              }
              await exited(child)
            }
          })()
          return stopping
        },
      })
    })
  })
}

/** Polls `url` until it answers 200; fails when the process exits first or after timeoutMs. */
export async function waitUntilAnswering(
  url: string,
  started: StartedProcess,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = 'no answer yet'
  while (Date.now() < deadline) {
    if (started.hasExited()) throw new Error(`${started.name}: exited before ${url} answered (${last})`)
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      if (response.status === 200) return
      last = `status ${response.status}`
    } catch (error) {
      last = error instanceof Error ? error.message : String(error)
    }
    await sleep(200)
  }
  throw new Error(`${started.name}: ${url} did not answer 200 within ${timeoutMs / 1000} s (${last})`)
}

/** Starts a server process and waits until `readyUrl` answers 200; a process that never does is stopped. */
export async function startAnswering(
  options: StartOptions,
  readyUrl: string,
  timeoutMs?: number,
): Promise<StartedProcess> {
  const started = await startProcess(options)
  try {
    await waitUntilAnswering(readyUrl, started, timeoutMs)
    return started
  } catch (error) {
    await started.stop()
    throw error
  }
}
