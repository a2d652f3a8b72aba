// One engine process in one cluster host, as a HostEngine: its state folder, its pid file, start until it answers, stop.
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { layoutFromEnv } from '../layout.ts'
import { PidFile } from '../native/engine.ts'
import { isAlive, waitFor } from '../processes.ts'
import type { HostEngine } from './engine.ts'
import type { ClusterHost, DaemonInHost } from './hosts.ts'

/**
 * The state folder of one engine of one host: `<cache>/cluster/<prefix>/<host>/<engine>` (data, config, log, pid
 * file). `fresh` empties it first: a run starts from nothing unless it asks to keep what a previous one left.
 */
export function clusterStateDir(prefix: string, host: ClusterHost, engine: string, fresh = false): string {
  const dir = join(layoutFromEnv().componentDir('cluster'), prefix, host.name, engine)
  if (fresh) rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  return dir
}

export interface DaemonEngineSpec {
  name: string
  host: ClusterHost
  /** the engine's state folder: the pid file lives here */
  dir: string
  logFile: string
  /** the process to start, asked on every start (configuration files are written here) */
  daemon(): Promise<Omit<DaemonInHost, 'logFile'>>
  /** resolves once the engine answers on its port; throws until then */
  ready(): Promise<unknown>
  readyTimeoutMs: number
  /** the engine's own way of a clean stop, and how long it gets before SIGKILL */
  stopSignal: NodeJS.Signals
  stopGraceMs: number
}

export function daemonEngine(spec: DaemonEngineSpec): HostEngine {
  const pidFile = new PidFile(spec.dir)
  const what = `${spec.host.name} ${spec.name}`
  return {
    name: spec.name,
    host: spec.host,
    logFile: spec.logFile,
    pid: () => pidFile.live(),
    async start() {
      let pid = pidFile.live()
      if (pid === undefined) {
        pid = spec.host.startDaemon({ ...(await spec.daemon()), logFile: spec.logFile })
        pidFile.write(pid)
      }
      const started = pid
      await waitFor(what, spec.ready, {
        timeoutMs: spec.readyTimeoutMs,
        intervalMs: 250,
        alive: () => isAlive(started),
      }).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}; its log is ${spec.logFile}`)
      })
    },
    async stop() {
      await pidFile.stop(spec.stopSignal, spec.stopGraceMs)
    },
  }
}
