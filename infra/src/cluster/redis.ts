// The cluster's Redis: a primary on the first host, its replica on the second and a sentinel on each of the three
// (Debian's redis-server, the sentinels in sentinel mode), so that the death of the primary's host leaves the
// services a Redis: two sentinels agree it is down and promote the replica, and the services' clients, which find the
// primary through the sentinels (REDIS_SENTINELS), follow.
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { assertRedisServer, redisServerArgs } from '../native/redis.ts'
import {
  addressText,
  defaultSentinelName,
  type RedisAddress,
  replicaHoldsCopy,
  sentinelConfig,
  sentinelSeesSet,
} from '../native/redis-sentinel.ts'
import { redisVersion } from '../probes.ts'
import { waitFor } from '../processes.ts'
import { clusterStateDir, daemonEngine } from './daemon.ts'
import type { HostEngine } from './engine.ts'
import type { ClusterHost } from './hosts.ts'

export interface ClusterRedisOptions {
  prefix: string
}

export interface ClusterRedis {
  /** the primary, the replica and the three sentinels, each an engine of its host (restarted with it) */
  engines: HostEngine[]
  /** the servers by their role at the start (after a failover the sentinels say which is the primary) */
  servers: { primary: HostEngine; replica: HostEngine }
  /** the primary at the start's address: a client that does not ask the sentinels (scripts, checks) */
  url: string
  /** REDIS_SENTINELS: the three sentinels */
  sentinels: string
  /** REDIS_NAME: the name they monitor the primary under */
  name: string
  /** the sentinels' addresses, for a client of this machine */
  sentinelAddresses: RedisAddress[]
  /** stops every engine of the set by its pid */
  stop(): Promise<void>
}

const serverPort = 6379
const sentinelPort = 26379
/**
 * A primary that does not answer for 2 s is down: the failover comes within seconds of a host's death, and a host
 * busy for a moment (two cores carry the cluster) does not start one.
 */
const downAfterMs = 2000
const failoverTimeoutMs = 15_000

/**
 * Starts the primary on `primary`, the replica on `replica` and a sentinel on each host, and resolves once the replica
 * has its copy and every sentinel sees the replica and the two others. Nothing is kept on disk by the servers (what
 * Meridian keeps in Redis is rebuilt or refreshed by the services: docs/how-to/scaling-out.md); the sentinels keep their
 * files, which they rewrite with what they learn (who the primary is now), across a host's restart.
 */
export async function startClusterRedis(
  {
    primary,
    replica,
    sentinels,
  }: { primary: ClusterHost; replica: ClusterHost; sentinels: readonly ClusterHost[] },
  options: ClusterRedisOptions,
): Promise<ClusterRedis> {
  assertRedisServer()
  const name = defaultSentinelName
  const primaryAddress: RedisAddress = { host: primary.address, port: serverPort }
  const server = (host: ClusterHost, role: 'primary' | 'replica', extra: string[]) => {
    const address = { host: host.address, port: serverPort }
    // nothing is kept between starts (no snapshot, no append-only file): a fresh folder costs nothing
    const dir = clusterStateDir(options.prefix, host, `redis-${role}`, true)
    return daemonEngine({
      name: `redis ${role}`,
      host,
      dir,
      logFile: join(dir, 'redis.log'),
      daemon: async () => ({
        command: 'redis-server',
        // the cluster's hosts reach it only over their own bridge; without a password, protected mode would refuse them
        args: [
          ...redisServerArgs({ bind: [host.address, '127.0.0.1'], dir, port: serverPort }),
          '--protected-mode',
          'no',
          // as a replica (the replica, and the primary once restarted after a failover) it names its own address:
          // the primary otherwise reports the address its connection came from, which between the campaign's hosts
          // is the machine's end of their links (198.18.0.1), and the sentinels, finding no replica there, refused
          // to fail over ("-failover-abort-no-good-slave")
          '--replica-announce-ip',
          host.address,
          ...extra,
        ],
        cwd: dir,
      }),
      ready: () => redisVersion(`redis://${addressText(address)}`),
      readyTimeoutMs: 30_000,
      stopSignal: 'SIGTERM',
      stopGraceMs: 10_000,
    })
  }
  const sentinel = (host: ClusterHost, index: number) => {
    const address = { host: host.address, port: sentinelPort }
    const dir = clusterStateDir(options.prefix, host, `redis-sentinel-${index + 1}`, true)
    const file = join(dir, 'sentinel.conf')
    return daemonEngine({
      name: 'redis sentinel',
      host,
      dir,
      logFile: join(dir, 'sentinel.log'),
      daemon: async () => {
        // written once: on a restart the sentinel reads what it rewrote (the primary of the moment, the others)
        if (!existsSync(file))
          writeFileSync(
            file,
            `${sentinelConfig(address, dir, { name, downAfterMs, failoverTimeoutMs, primary: primaryAddress })}protected-mode no\n`,
          )
        return { command: 'redis-server', args: [file, '--sentinel'], cwd: dir }
      },
      ready: () => sentinelSeesSet(address, name),
      readyTimeoutMs: 60_000,
      stopSignal: 'SIGTERM',
      stopGraceMs: 10_000,
    })
  }

  const primaryEngine = server(primary, 'primary', [])
  await primaryEngine.start()
  const replicaEngine = server(replica, 'replica', ['--replicaof', primary.address, String(serverPort)])
  await replicaEngine.start()
  const replicaAddress = { host: replica.address, port: serverPort }
  await waitFor("the cluster's Redis replica to hold its copy", () => replicaHoldsCopy(replicaAddress), {
    timeoutMs: 30_000,
  })
  const sentinelEngines = sentinels.map(sentinel)
  // started together: each is ready only once it has heard the others
  await Promise.all(sentinelEngines.map((engine) => engine.start()))
  const sentinelAddresses = sentinels.map((host) => ({ host: host.address, port: sentinelPort }))
  const engines = [primaryEngine, replicaEngine, ...sentinelEngines]
  return {
    engines,
    servers: { primary: primaryEngine, replica: replicaEngine },
    url: `redis://${addressText(primaryAddress)}`,
    sentinels: sentinelAddresses.map(addressText).join(','),
    name,
    sentinelAddresses,
    async stop() {
      await Promise.all(engines.map((engine) => engine.stop()))
    },
  }
}
