// Starts a server in a child process of its own (so the load generator never shares its event loop) and talks to
// it over IPC; stops it by the pid this module started, and nothing else.
import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ChildMessage, ParentMessage, ProcessSnapshot, ServerName } from './ipc.ts'

export interface ServerProcess<Name extends string = ServerName> {
  name: Name
  pid: number
  baseUrl: string
  /** restarts the child's peak-RSS tracking */
  markPeak(): Promise<ProcessSnapshot>
  snapshot(): Promise<ProcessSnapshot>
  /** a snapshot after a full garbage collection, when the process runs with --expose-gc (else as snapshot()) */
  settledSnapshot(): Promise<ProcessSnapshot>
  /** asks the server to close; kills the pid if it has not exited within 10 s. Returns its last snapshot. */
  stop(): Promise<ProcessSnapshot | undefined>
}

// src/servers/*.ts under tsx, dist/servers/*.js once built
const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js'
export const serverEntries: Record<ServerName, string> = {
  chassis: fileURLToPath(new URL(`./servers/chassis-server${extension}`, import.meta.url)),
  bare: fileURLToPath(new URL(`./servers/bare-server${extension}`, import.meta.url)),
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })

export const startServerProcess = (name: ServerName, env: NodeJS.ProcessEnv): Promise<ServerProcess> =>
  startProcessOverIpc(name, serverEntries[name], env)

/**
 * Any server entry that answers over IPC with serveOverIpc (src/servers/serve-over-ipc.ts), e.g. bench:realtime's:
 * forked under tsx, with `execArgv` added to node's flags after it.
 */
export async function startProcessOverIpc<Name extends string>(
  name: Name,
  entry: string,
  env: NodeJS.ProcessEnv,
  { execArgv = [], readyTimeoutMs = 30_000 }: { execArgv?: string[]; readyTimeoutMs?: number } = {},
): Promise<ServerProcess<Name>> {
  const child = fork(entry, [], {
    env,
    execArgv: [
      // tsx first: an --import of execArgv may be TypeScript too (the kit's tracing preload)
      ...(extension === '.ts' ? ['--import', import.meta.resolve('tsx')] : []),
      ...execArgv,
      // BENCH_CPU_PROFILE=<dir>: each server writes a V8 CPU profile there when it exits (open in Chrome DevTools)
      ...(process.env.BENCH_CPU_PROFILE
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`]
        : []),
      // BENCH_CPU_PROFILE_INTERVAL=<µs>: a finer sampling than V8's 1,000 µs, for costs of a few µs per request
      ...(process.env.BENCH_CPU_PROFILE && process.env.BENCH_CPU_PROFILE_INTERVAL
        ? [`--cpu-prof-interval=${process.env.BENCH_CPU_PROFILE_INTERVAL}`]
        : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const pid = child.pid
  if (pid === undefined) throw new Error(`${name}: the server process did not start`)

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name}: not ready after ${readyTimeoutMs / 1000} s`)),
      readyTimeoutMs,
    )
    const settle = (outcome: () => void) => {
      clearTimeout(timer)
      child.off('message', onMessage)
      child.off('exit', onExit)
      outcome()
    }
    const onMessage = (message: ChildMessage) => {
      if (message.type === 'ready') settle(() => resolve(message.port))
      if (message.type === 'failed') settle(() => reject(new Error(`${name}: ${message.message}`)))
    }
    const onExit = (code: number | null) =>
      settle(() => reject(new Error(`${name}: the server process exited (${code}) before it was ready`)))
    child.on('message', onMessage)
    child.once('exit', onExit)
  }).catch(async (error: unknown) => {
    if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL')
    await exited(child)
    throw error
  })

  let nextId = 0
  const pending = new Map<number, { resolve(snapshot: ProcessSnapshot): void; reject(error: Error): void }>()
  child.on('message', (message: ChildMessage) => {
    if (message.type !== 'reply') return
    pending.get(message.id)?.resolve(message.snapshot)
    pending.delete(message.id)
  })
  child.once('exit', (code, signal) => {
    for (const { reject } of pending.values()) reject(new Error(`${name}: exited (${code ?? signal})`))
    pending.clear()
  })
  const ask = (type: ParentMessage['type']) =>
    new Promise<ProcessSnapshot>((resolve, reject) => {
      if (!child.connected) return reject(new Error(`${name}: the server process is gone`))
      const id = nextId++
      pending.set(id, { resolve, reject })
      // with a callback, a channel closed meanwhile (the server died) is a rejection, not an 'error' event
      child.send({ type, id } satisfies ParentMessage, (error) => {
        if (!error) return
        pending.delete(id)
        reject(error)
      })
    })

  let stopped: Promise<ProcessSnapshot | undefined> | undefined
  return {
    name,
    pid,
    baseUrl: `http://127.0.0.1:${port}`,
    markPeak: () => ask('mark'),
    snapshot: () => ask('snapshot'),
    settledSnapshot: () => ask('settled'),
    stop() {
      stopped ??= (async () => {
        const last = child.connected ? ask('stop').catch(() => undefined) : Promise.resolve(undefined)
        const deadline = new Promise<'late'>((resolve) => setTimeout(resolve, 10_000, 'late').unref())
        if ((await Promise.race([exited(child), deadline])) === 'late') {
          process.kill(pid, 'SIGKILL')
          await exited(child)
        }
        // the reply comes before the exit; if it never came, the exit has rejected it into undefined
        return last
      })()
      return stopped
    },
  }
}
