// Redis without a single point (issue 45): a primary, a replica and three sentinels, each Debian's redis-server (a
// sentinel is redis-server in sentinel mode: what Debian's redis-sentinel package runs), for the tests and the
// cluster. Clients find the primary by asking the sentinels (REDIS_SENTINELS, REDIS_NAME); when the primary's process
// or host dies, two sentinels agree it is down and promote the replica.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ConnectionOptions } from 'node:tls'
import { Redis } from 'ioredis'
import { redisVersion } from '../probes.ts'
import { errorText, isAlive, startDaemon, stopPid, waitFor } from '../processes.ts'
import { assertRedisServer, redisServerArgs } from './redis.ts'

export interface RedisAddress {
  host: string
  port: number
}

export interface RedisSentinelSetOptions {
  /** the set's folder: each member's configuration, log and working folder under it */
  dir: string
  primary: RedisAddress
  replica: RedisAddress
  /** three sentinels: two of them must agree that the primary is down (the quorum) */
  sentinels: readonly [RedisAddress, RedisAddress, RedisAddress]
  /** the primary's name the sentinels monitor it under (REDIS_NAME); 'meridian' by default */
  name?: string
  /** how long the primary may not answer before a sentinel calls it down; 5 s by default */
  downAfterMs?: number
  /** a failover that has not ended after this long is tried again by another sentinel; 30 s by default */
  failoverTimeoutMs?: number
}

export interface RedisSentinelSet {
  name: string
  sentinels: readonly RedisAddress[]
  /** the sentinels as REDIS_SENTINELS takes them: `host:port,host:port,host:port` */
  sentinelsVariable: string
  /** each member's pid, by its role at the start */
  pids: { primary: number; replica: number; sentinels: number[] }
  /** the address the sentinels give for the primary now (SENTINEL GET-MASTER-ADDR-BY-NAME, asked of each in turn) */
  primaryAddress(): Promise<RedisAddress>
  /** stops every member still running, by the pids recorded at their start */
  stop(): Promise<void>
}

export const defaultSentinelName = 'meridian'

/**
 * How a member of a secure set is reached (the cluster's, infra/src/cluster/redis.ts): over TLS, and on a server as a
 * user of its ACL. Unset: plaintext as the default user.
 */
export interface RedisMemberAccess {
  tls?: ConnectionOptions
  username?: string
  password?: string
}

/** A secure set's sentinel: TLS only, its certificate, and the user it logs in to the servers as. */
export interface SecureSentinelSettings {
  certFile: string
  keyFile: string
  caFile: string
  user: string
  password: string
}

const accessOptions = (access: RedisMemberAccess = {}) => ({
  ...(access.tls ? { tls: access.tls } : {}),
  ...(access.username ? { username: access.username } : {}),
  ...(access.password ? { password: access.password } : {}),
})

/** `host:port`, an IPv6 address in brackets: an entry of REDIS_SENTINELS. */
export const addressText = ({ host, port }: RedisAddress) =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`

/**
 * The sentinels' own configuration: a sentinel rewrites its file (what it learns), so each has one of its own. With
 * `secure`: TLS only on its port (to clients, to the other sentinels and to the servers, tls-replication), logging in
 * to the servers as `secure.user`.
 */
export function sentinelConfig(
  self: RedisAddress,
  dir: string,
  options: Required<Pick<RedisSentinelSetOptions, 'name' | 'downAfterMs' | 'failoverTimeoutMs'>> & {
    primary: RedisAddress
    secure?: SecureSentinelSettings
  },
): string {
  const { secure } = options
  return [
    ...(secure
      ? [
          'port 0',
          `tls-port ${self.port}`,
          `tls-cert-file ${secure.certFile}`,
          `tls-key-file ${secure.keyFile}`,
          `tls-ca-cert-file ${secure.caFile}`,
          // the servers and the other sentinels are reached over TLS too, and the port announced is this one
          'tls-replication yes',
          'tls-auth-clients optional',
        ]
      : [`port ${self.port}`]),
    `bind ${self.host}`,
    `dir ${dir}`,
    'daemonize no',
    // the members are named by address: no name to resolve, and an address announced as given
    'sentinel resolve-hostnames no',
    `sentinel monitor ${options.name} ${options.primary.host} ${options.primary.port} 2`,
    ...(secure
      ? [
          `sentinel auth-user ${options.name} ${secure.user}`,
          `sentinel auth-pass ${options.name} ${secure.password}`,
        ]
      : []),
    `sentinel down-after-milliseconds ${options.name} ${options.downAfterMs}`,
    `sentinel failover-timeout ${options.name} ${options.failoverTimeoutMs}`,
    `sentinel parallel-syncs ${options.name} 1`,
    '',
  ].join('\n')
}

/** Asks one sentinel where the primary is; throws when it cannot say. */
export async function askSentinel(
  sentinel: RedisAddress,
  name: string,
  access?: RedisMemberAccess,
): Promise<RedisAddress> {
  const client = new Redis({
    host: sentinel.host,
    port: sentinel.port,
    ...accessOptions(access),
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  client.on('error', () => {}) // the failed command below carries the error
  try {
    await client.connect()
    const answer = (await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as [string, string] | null
    if (!answer) throw new Error(`sentinel ${addressText(sentinel)} knows no primary named ${name}`)
    return { host: answer[0], port: Number(answer[1]) }
  } finally {
    client.disconnect()
  }
}

/**
 * Starts the primary, then the replica (replicating it), then the three sentinels, and resolves once the replica has
 * its copy and every sentinel sees the primary, the replica and the two other sentinels: from then on, a failover
 * can happen. A member that cannot start stops those that did.
 */
export async function startRedisSentinelSet(options: RedisSentinelSetOptions): Promise<RedisSentinelSet> {
  assertRedisServer()
  const name = options.name ?? defaultSentinelName
  const downAfterMs = options.downAfterMs ?? 5000
  const failoverTimeoutMs = options.failoverTimeoutMs ?? 30_000
  const started: number[] = []
  const start = (role: string, args: string[]): number => {
    const home = join(options.dir, role)
    mkdirSync(home, { recursive: true })
    const pid = startDaemon({ command: 'redis-server', args, logFile: join(home, `${role}.log`), cwd: home })
    started.push(pid)
    return pid
  }
  const stop = async () => {
    for (const pid of started.splice(0).reverse()) if (isAlive(pid)) await stopPid(pid, 'SIGTERM', 10_000)
  }

  try {
    const dataArgs = (member: RedisAddress, role: string) =>
      redisServerArgs({ bind: [member.host], dir: join(options.dir, role), port: member.port })
    const primary = start('primary', dataArgs(options.primary, 'primary'))
    await waitFor('the Redis primary', () => redisVersion(`redis://${addressText(options.primary)}`), {
      timeoutMs: 30_000,
      alive: () => isAlive(primary),
    })
    const replica = start('replica', [
      ...dataArgs(options.replica, 'replica'),
      '--replicaof',
      options.primary.host,
      String(options.primary.port),
    ])
    await waitFor('the Redis replica to hold its copy', () => replicaHoldsCopy(options.replica), {
      timeoutMs: 30_000,
      alive: () => isAlive(replica),
    })
    const sentinels = options.sentinels.map((sentinel, index) => {
      const role = `sentinel-${index + 1}`
      const home = join(options.dir, role)
      mkdirSync(home, { recursive: true })
      const file = join(home, 'sentinel.conf')
      writeFileSync(
        file,
        sentinelConfig(sentinel, home, { name, downAfterMs, failoverTimeoutMs, primary: options.primary }),
      )
      return start(role, [file, '--sentinel'])
    })
    for (const [index, sentinel] of options.sentinels.entries()) {
      await waitFor(
        `sentinel ${addressText(sentinel)} to see the set`,
        () => sentinelSeesSet(sentinel, name),
        { timeoutMs: 60_000, alive: () => isAlive(sentinels[index]) },
      )
    }
    return {
      name,
      sentinels: options.sentinels,
      sentinelsVariable: options.sentinels.map(addressText).join(','),
      pids: { primary, replica, sentinels },
      async primaryAddress() {
        let last: unknown
        for (const sentinel of options.sentinels) {
          try {
            return await askSentinel(sentinel, name)
          } catch (error) {
            last = error
          }
        }
        throw new Error(`no sentinel could say where the primary is (${errorText(last)})`)
      },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** INFO replication of one server: its role, and for a replica its link to the primary. */
export async function replicationOf(member: RedisAddress, access?: RedisMemberAccess): Promise<string> {
  const client = new Redis({
    host: member.host,
    port: member.port,
    ...accessOptions(access),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    return await client.info('replication')
  } finally {
    client.disconnect()
  }
}

/** Resolves once the replica's link to its primary is up (its copy made), throws until then: a readiness check. */
export async function replicaHoldsCopy(replica: RedisAddress, access?: RedisMemberAccess): Promise<void> {
  if (!/master_link_status:up/.test(await replicationOf(replica, access)))
    throw new Error('its link to the primary is not up yet')
}

/**
 * Resolves once the sentinel sees a replica and the two other sentinels, throws until then: a readiness check. From
 * then on it can take part in a failover (two of three must agree the primary is down).
 */
export async function sentinelSeesSet(
  sentinel: RedisAddress,
  name: string,
  access?: RedisMemberAccess,
): Promise<void> {
  const seen = await sentinelView(sentinel, name, access)
  if (seen.replicas < 1 || seen.sentinels < 2)
    throw new Error(`it sees ${seen.replicas} replica(s) and ${seen.sentinels} other sentinel(s)`)
}

/** What one sentinel knows of the set: its replicas and the other sentinels. */
export async function sentinelView(
  sentinel: RedisAddress,
  name: string,
  access?: RedisMemberAccess,
): Promise<{ replicas: number; sentinels: number }> {
  const client = new Redis({
    host: sentinel.host,
    port: sentinel.port,
    ...accessOptions(access),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    const replicas = (await client.call('SENTINEL', 'REPLICAS', name)) as unknown[]
    const sentinels = (await client.call('SENTINEL', 'SENTINELS', name)) as unknown[]
    return { replicas: replicas.length, sentinels: sentinels.length }
  } finally {
    client.disconnect()
  }
}
