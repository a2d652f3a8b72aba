// The parent's side of the client processes: forked under tsx, asked over IPC, stopped by the pid recorded here.
// bench:graphql's subscriber process speaks the same messages (client-ipc.ts' ClientMessage) with requests of its own.
import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ClientMessage, ClientRequest } from './client-ipc.ts'

const entry = fileURLToPath(new URL('./client-process.ts', import.meta.url))

export interface ClientProcess<Request = ClientRequest> {
  pid: number
  ask<Body>(request: Request): Promise<Body>
  /** broadcast `seq` has reached every socket of this process that listens to `/` */
  onReceivedAll(listener: (seq: number) => void): void
  /** disconnects, then SIGKILL after 5 s if it has not exited */
  stop(): Promise<void>
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })

/** Forks `clientEntry` (this bench's client-process.ts by default) and waits for its `ready`. */
export async function startClientProcess<Request extends { type: string } = ClientRequest>(
  label: string,
  env: NodeJS.ProcessEnv,
  clientEntry: string = entry,
): Promise<ClientProcess<Request>> {
  const child = fork(clientEntry, [], {
    env,
    execArgv: ['--import', import.meta.resolve('tsx')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const pid = child.pid
  if (pid === undefined) throw new Error(`${label}: the client process did not start`)
  await new Promise<void>((resolve, reject) => {
    const onMessage = (message: ClientMessage) => {
      if (message.type !== 'ready') return
      child.off('exit', onExit)
      child.off('message', onMessage)
      resolve()
    }
    const onExit = (code: number | null) =>
      reject(new Error(`${label}: exited (${code}) before it was ready`))
    child.on('message', onMessage)
    child.once('exit', onExit)
  })

  let nextId = 0
  const pending = new Map<number, { resolve(body: unknown): void; reject(error: Error): void }>()
  const listeners: ((seq: number) => void)[] = []
  child.on('message', (message: ClientMessage) => {
    if (message.type === 'received-all') for (const listener of listeners) listener(message.seq)
    if (message.type !== 'reply') return
    const waiting = pending.get(message.id)
    pending.delete(message.id)
    if (message.ok) waiting?.resolve(message.body)
    else waiting?.reject(new Error(`${label}: ${message.message}`))
  })
  child.once('exit', (code, signal) => {
    for (const { reject } of pending.values()) reject(new Error(`${label}: exited (${code ?? signal})`))
    pending.clear()
  })

  let stopping: Promise<void> | undefined
  return {
    pid,
    ask: <Body>(request: Request) =>
      new Promise<Body>((resolve, reject) => {
        if (!child.connected) return reject(new Error(`${label}: the client process is gone`))
        const id = nextId++
        pending.set(id, { resolve: resolve as (body: unknown) => void, reject })
        child.send({ ...request, id }, (error) => {
          if (!error) return
          pending.delete(id)
          reject(error)
        })
      }),
    onReceivedAll: (listener) => listeners.push(listener),
    stop() {
      stopping ??= (async () => {
        if (child.connected) child.disconnect()
        const late = new Promise<'late'>((resolve) => setTimeout(resolve, 5000, 'late').unref())
        if ((await Promise.race([exited(child), late])) === 'late') {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            // gone meanwhile
          }
          await exited(child)
        }
      })()
      return stopping
    },
  }
}
