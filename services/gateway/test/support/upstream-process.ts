// Starts test-upstream.ts as a real process and gives the test its port, Consul id, logs and a way to kill it.
import { type ChildProcess, fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { consulApi, infraEndpoints } from '@meridian/testkit'

export interface UpstreamProcess {
  label: string
  port: number
  /** the instance id in Consul */
  id: string
  /** what the process logged (pino lines, parsed) */
  logs: Record<string, unknown>[]
  child: ChildProcess
  /** SIGKILL: no deregistration, like a crash */
  kill(): Promise<void>
  /** SIGTERM: deregisters and closes */
  stop(): Promise<void>
  /** removes the instance from Consul (after kill) */
  deregister(): Promise<void>
  hits(): Promise<Record<string, number>>
  /** turns the process's maintenance switch on or off (what Consul KV does for a real service) */
  setMaintenance(on: boolean): Promise<void>
}

const script = fileURLToPath(new URL('./test-upstream.ts', import.meta.url))

export async function startUpstream(options: {
  name: string
  label: string
  weight?: number
  segment?: string
  /** the entries its /api/v1/admin/audit/:service answers (a service's audit trail) */
  audit?: readonly Record<string, unknown>[]
}): Promise<UpstreamProcess> {
  const { consulHttpAddr, consulToken } = infraEndpoints()
  const child = fork(script, [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: {
      ...process.env,
      UPSTREAM_NAME: options.name,
      UPSTREAM_LABEL: options.label,
      UPSTREAM_WEIGHT: String(options.weight ?? 1),
      UPSTREAM_SEGMENT: options.segment ?? 'test',
      UPSTREAM_AUDIT: JSON.stringify(options.audit ?? []),
      CONSUL_HTTP_ADDR: consulHttpAddr,
      ...(consulToken ? { CONSUL_HTTP_TOKEN: consulToken } : {}),
    },
  })
  // a test run that ends abruptly (a hook timing out) must not leave the process behind
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)
  child.once('exit', () => process.off('exit', killOnExit))
  const logs: Record<string, unknown>[] = []
  let buffered = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const lines = buffered.split('\n')
    buffered = lines.pop() ?? ''
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line))
      } catch {
        // not a log line
      }
    }
  })
  let errors = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    errors += chunk.toString()
  })
  const ready = new Promise<{ port: number; id: string }>((resolve, reject) => {
    child.on('message', (message: { ready?: boolean; port: number; id: string }) => {
      if (message.ready) resolve(message)
    })
    child.once('exit', (code) =>
      reject(new Error(`test upstream exited (${code}) before it was ready: ${errors}`)),
    )
  })
  const { port, id } = await ready
  const exited = once(child, 'exit')
  const { baseUrl, headers } = consulApi()
  return {
    label: options.label,
    port,
    id,
    logs,
    child,
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL')
      await exited
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    },
    async deregister() {
      await fetch(`${baseUrl}/v1/agent/service/deregister/${encodeURIComponent(id)}`, {
        method: 'PUT',
        headers,
      })
    },
    async hits() {
      const response = await fetch(`http://127.0.0.1:${port}/hits`)
      return (await response.json()) as Record<string, number>
    },
    async setMaintenance(on) {
      const applied = new Promise<void>((resolve) => {
        const listener = (message: { maintenanceApplied?: boolean }) => {
          if (message.maintenanceApplied !== on) return
          child.off('message', listener)
          resolve()
        }
        child.on('message', listener)
      })
      child.send({ maintenance: on })
      await applied
    },
  }
}
