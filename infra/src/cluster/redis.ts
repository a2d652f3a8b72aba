// The cluster's one Redis: a redis-server on one host, configured as the native one, on that host's address.
import { join } from 'node:path'
import { assertRedisServer, redisServerArgs } from '../native/redis.ts'
import { redisVersion } from '../probes.ts'
import { clusterStateDir, daemonEngine } from './daemon.ts'
import type { HostEngine } from './engine.ts'
import type { ClusterHost } from './hosts.ts'

export interface ClusterRedisOptions {
  prefix: string
}

/**
 * Starts redis-server on `host` (its address and its own 127.0.0.1, port 6379) and resolves once it answers. One
 * instance, not Sentinel: what Meridian keeps in Redis is derived state the services rebuild (docs/scaling-out.md).
 */
export async function startClusterRedis(
  host: ClusterHost,
  options: ClusterRedisOptions,
): Promise<HostEngine & { url: string }> {
  assertRedisServer()
  const url = `redis://${host.address}:6379`
  // nothing is kept between starts (no snapshot, no append-only file): a fresh folder costs nothing
  const dir = clusterStateDir(options.prefix, host, 'redis', true)
  const engine = daemonEngine({
    name: 'redis',
    host,
    dir,
    logFile: join(dir, 'redis.log'),
    daemon: async () => ({
      command: 'redis-server',
      // the cluster's hosts reach it only over their own bridge; without a password, protected mode would refuse them
      args: [...redisServerArgs({ bind: [host.address, '127.0.0.1'], dir }), '--protected-mode', 'no'],
      cwd: dir,
    }),
    ready: () => redisVersion(url),
    readyTimeoutMs: 30_000,
    stopSignal: 'SIGTERM',
    stopGraceMs: 10_000,
  })
  await engine.start()
  return Object.assign(engine, { url })
}
