// Starts the writer, relay or consumer in a child process of its own, talks to it over IPC, stops it by pid.
import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ChildConfig, ChildMessage, Notice, ParentMessage, Request, Role, StopReply } from './ipc.ts'

export interface RoleProcess {
  role: Role
  pid: number
  /** rejects when the process answers with an error, is gone, or has not answered within timeoutMs (60 s) */
  request<T>(request: Request, timeoutMs?: number): Promise<T>
  /** tells the process something, without an answer */
  tell(notice: Notice): void
  /** the consumer's count of handled events, as last reported */
  readonly progress: number
  /** called with each count the consumer reports */
  onProgress(listener: ((count: number) => void) | undefined): void
  /** asks the process to close; kills the pid if it has not exited within 10 s. Its CPU time and peak RSS. */
  stop(): Promise<StopReply | undefined>
}

// src/events/*-process.ts under tsx, dist/events/*-process.js once built
const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js'
const entryOf = (role: Role) => fileURLToPath(new URL(`./${role}-process${extension}`, import.meta.url))

/**
 * kafkajs warns once per producer that the idempotent producer's retries are limited (createKafka's retry settings,
 * as in the services): known, not the bench's business, and it would be printed twice per phase.
 */
const knownNoise = ['Limiting retries for the idempotent producer']

/** Forwards a child's stderr line by line, without the known noise. */
function forwardStderr(child: ChildProcess): void {
  let pending = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk
    const lines = pending.split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) {
      if (!knownNoise.some((noise) => line.includes(noise))) process.stderr.write(`${line}\n`)
    }
  })
  child.stderr?.on('end', () => {
    if (pending !== '') process.stderr.write(`${pending}\n`)
  })
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })

export async function startRoleProcess(config: ChildConfig, env: NodeJS.ProcessEnv): Promise<RoleProcess> {
  const { role } = config
  const child = fork(entryOf(role), [], {
    env,
    execArgv: extension === '.ts' ? ['--import', import.meta.resolve('tsx')] : [],
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    // structured clone: NaN survives, and large arrays of times travel faster than as JSON text
    serialization: 'advanced',
  })
  const pid = child.pid
  if (pid === undefined) throw new Error(`${role}: the process did not start`)
  forwardStderr(child)

  let nextId = 0
  let progress = 0
  let progressListener: ((count: number) => void) | undefined
  const pending = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>()
  child.on('message', (message: ChildMessage) => {
    if (message.type === 'progress') {
      progress = message.count
      progressListener?.(message.count)
      return
    }
    const waiter = pending.get(message.id)
    pending.delete(message.id)
    if (message.ok) waiter?.resolve(message.result)
    else waiter?.reject(new Error(`${role}: ${message.message}`))
  })
  child.once('exit', (code, signal) => {
    for (const { reject } of pending.values()) reject(new Error(`${role}: exited (${code ?? signal})`))
    pending.clear()
  })
  const request = <T>(body: Request, timeoutMs = 60_000) =>
    new Promise<T>((resolve, reject) => {
      if (!child.connected) return reject(new Error(`${role}: the process is gone`))
      const id = nextId++
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new Error(`${role}: no answer to '${body.kind}' within ${timeoutMs / 1000} s`))
      }, timeoutMs)
      pending.set(id, {
        resolve: (result) => {
          clearTimeout(timer)
          resolve(result as T)
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        },
      })
      // with a callback, a channel closed meanwhile (the child died) is a rejection, not an 'error' event
      child.send({ type: 'request', id, request: body } satisfies ParentMessage, (error) => {
        if (!error) return
        pending.delete(id)
        clearTimeout(timer)
        reject(error)
      })
    })

  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL')
    await exited(child)
  }
  try {
    await request({ kind: 'init', config }, 45_000)
  } catch (error) {
    await kill()
    throw error
  }

  let stopped: Promise<StopReply | undefined> | undefined
  return {
    role,
    pid,
    request,
    tell(notice) {
      if (child.connected) child.send({ type: 'notice', notice } satisfies ParentMessage, () => {})
    },
    get progress() {
      return progress
    },
    onProgress(listener) {
      progressListener = listener
    },
    stop() {
      stopped ??= (async () => {
        const last = child.connected
          ? request<StopReply>({ kind: 'stop' }, 20_000).catch(() => undefined)
          : Promise.resolve(undefined)
        const deadline = new Promise<'late'>((resolve) => setTimeout(resolve, 25_000, 'late').unref())
        if ((await Promise.race([exited(child), deadline])) === 'late') await kill()
        return last
      })()
      return stopped
    },
  }
}
