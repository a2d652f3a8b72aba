// What every engine of one cluster host offers the cluster and its fault campaign: start, stop, and its process.
import type { ClusterHost } from './hosts.ts'

export interface HostEngine {
  readonly name: string // 'consul' | 'kafka' | 'postgres' | 'redis' | 'toxiproxy'
  readonly host: ClusterHost
  readonly logFile: string
  pid(): number | undefined // the live process, by the pid it recorded
  start(): Promise<void> // (re)starts it with its data kept; resolves once it answers on its port
  stop(): Promise<void> // graceful, by pid
}
