// The cluster's Redis: a primary on the first host, its replica on the second and a sentinel on each of the three
// (Debian's redis-server, the sentinels in sentinel mode), so that the death of the primary's host leaves the
// services a Redis: two sentinels agree it is down and promote the replica, and the services' clients, which find the
// primary through the sentinels (REDIS_SENTINELS), follow. Secure (issue 45): every member over TLS only with a
// certificate of the cluster's CA, the default user off, an ACL user per service (the services' declared access,
// secure/redis-acl.ts), the replica and the sentinels logging in as users of their own.
import { chmodSync, copyFileSync, existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isRedisService } from '@meridian/contracts'
import { assertRedisServer, redisServerArgs } from '../native/redis.ts'
import {
  addressText,
  defaultSentinelName,
  type RedisAddress,
  type RedisMemberAccess,
  replicaHoldsCopy,
  type SecureSentinelSettings,
  sentinelConfig,
  sentinelSeesSet,
} from '../native/redis-sentinel.ts'
import { redisVersion } from '../probes.ts'
import { waitFor } from '../processes.ts'
import type { CertificateAuthority } from '../secure/certificates.ts'
import { instanceCredentials } from '../secure/engine.ts'
import {
  passwordHashRule,
  redisAclLines,
  redisAdminUser,
  redisReplicationAclLines,
  redisReplicationUser,
  redisSentinelUser,
} from '../secure/redis-acl.ts'
import { clusterStateDir, daemonEngine } from './daemon.ts'
import type { HostEngine } from './engine.ts'
import type { ClusterHost } from './hosts.ts'

export interface ClusterRedisOptions {
  prefix: string
  /**
   * TLS only against `ca`, the default user off, an ACL user per principal (a service with declared Redis access),
   * the passwords kept in `dir`
   */
  secure?: { ca: CertificateAuthority; principals: readonly string[]; dir: string }
}

export interface ClusterRedis {
  /** the primary, the replica and the three sentinels, each an engine of its host (restarted with it) */
  engines: HostEngine[]
  /** the servers by their role at the start (after a failover the sentinels say which is the primary) */
  servers: { primary: HostEngine; replica: HostEngine }
  /**
   * the primary at the start's address: a client that does not ask the sentinels (scripts, checks); on a secure set
   * rediss:// as the administrator
   */
  url: string
  /** how a server is reached as the administrator (TLS and the user on a secure set; nothing otherwise) */
  serverAccess: RedisMemberAccess
  /** how a sentinel is reached (TLS on a secure set; nothing otherwise) */
  sentinelAccess: RedisMemberAccess
  /** the administrator's REDIS_URL (and REDIS_TLS_CA on a secure set) */
  adminEnv(): Record<string, string>
  /** a service's REDIS_URL as its own user and REDIS_TLS_CA (secure), or the administrator's (plaintext) */
  envFor(service: string): Record<string, string>
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
  const { secure } = options
  const undeclared = (secure?.principals ?? []).filter((principal) => !isRedisService(principal))
  if (undeclared.length > 0)
    throw new Error(`cluster Redis: no Redis access is declared for ${undeclared.join(', ')}`)
  const passwords = secure
    ? instanceCredentials(secure.dir, [
        redisAdminUser,
        redisReplicationUser,
        redisSentinelUser,
        ...secure.principals,
      ])
    : {}
  const passwordOf = (user: string): string => {
    const password = passwords[user]
    if (password === undefined) throw new Error(`cluster Redis: '${user}' is not one of its users`)
    return password
  }
  // one certificate for every member: each host's address and the loopback the servers also listen on
  const certificate = secure
    ? await secure.ca.server('redis', [...sentinels.map((host) => host.address), '127.0.0.1'])
    : undefined
  const tls = secure ? { ca: secure.ca.caPem() } : undefined
  const serverAccess: RedisMemberAccess = secure
    ? { tls, username: redisAdminUser, password: passwordOf(redisAdminUser) }
    : {}
  const sentinelAccess: RedisMemberAccess = tls ? { tls } : {}
  const urlOf = (user: string | undefined): string =>
    secure && user
      ? `rediss://${user}:${encodeURIComponent(passwordOf(user))}@${addressText(primaryAddress)}`
      : `redis://${addressText(primaryAddress)}`
  /** The member's key, certificate, CA and (a server's) aclfile in its folder, readable by its owner alone. */
  const secureFiles = (
    dir: string,
  ): { certFile: string; keyFile: string; caFile: string; aclFile: string } => {
    if (!secure || !certificate) throw new Error('cluster Redis: not secure')
    const files = {
      certFile: join(dir, 'redis.pem'),
      keyFile: join(dir, 'redis-key.pem'),
      caFile: join(dir, 'ca.pem'),
      aclFile: join(dir, 'users.acl'),
    }
    copyFileSync(certificate.certFile, files.certFile)
    copyFileSync(certificate.keyFile, files.keyFile)
    chmodSync(files.keyFile, 0o600)
    copyFileSync(secure.ca.caFile, files.caFile)
    const passwordRule = (user: string) => passwordHashRule(passwordOf(user))
    writeFileSync(
      files.aclFile,
      `${[...redisAclLines({ passwordRule, services: secure.principals }), ...redisReplicationAclLines(passwordRule)].join('\n')}\n`,
      { mode: 0o600 },
    )
    return files
  }
  /** A server's TLS, ACL and replication login (as a replica now, or once a failover makes it one). */
  const secureServerArgs = (dir: string): string[] => {
    if (!secure) return []
    const files = secureFiles(dir)
    return [
      '--port',
      '0',
      '--tls-port',
      String(serverPort),
      '--tls-cert-file',
      files.certFile,
      '--tls-key-file',
      files.keyFile,
      '--tls-ca-cert-file',
      files.caFile,
      '--tls-auth-clients',
      'optional',
      '--tls-replication',
      'yes',
      '--aclfile',
      files.aclFile,
      '--masteruser',
      redisReplicationUser,
      '--masterauth',
      passwordOf(redisReplicationUser),
    ]
  }
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
          ...secureServerArgs(dir),
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
      ready: () =>
        redisVersion(
          secure
            ? `rediss://${redisAdminUser}:${encodeURIComponent(passwordOf(redisAdminUser))}@${addressText(address)}`
            : `redis://${addressText(address)}`,
          tls,
        ),
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
        if (!existsSync(file)) {
          const settings: SecureSentinelSettings | undefined = secure
            ? { ...secureFiles(dir), user: redisSentinelUser, password: passwordOf(redisSentinelUser) }
            : undefined
          writeFileSync(
            file,
            `${sentinelConfig(address, dir, { name, downAfterMs, failoverTimeoutMs, primary: primaryAddress, ...(settings ? { secure: settings } : {}) })}protected-mode no\n`,
            { mode: 0o600 },
          )
        }
        return { command: 'redis-server', args: [file, '--sentinel'], cwd: dir }
      },
      ready: () => sentinelSeesSet(address, name, sentinelAccess),
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
  await waitFor(
    "the cluster's Redis replica to hold its copy",
    () => replicaHoldsCopy(replicaAddress, serverAccess),
    {
      timeoutMs: 30_000,
    },
  )
  const sentinelEngines = sentinels.map(sentinel)
  // started together: each is ready only once it has heard the others
  await Promise.all(sentinelEngines.map((engine) => engine.start()))
  const sentinelAddresses = sentinels.map((host) => ({ host: host.address, port: sentinelPort }))
  const engines = [primaryEngine, replicaEngine, ...sentinelEngines]
  return {
    engines,
    servers: { primary: primaryEngine, replica: replicaEngine },
    url: urlOf(secure ? redisAdminUser : undefined),
    serverAccess,
    sentinelAccess,
    adminEnv: () => ({
      REDIS_URL: urlOf(secure ? redisAdminUser : undefined),
      ...(secure ? { REDIS_TLS_CA: secure.ca.caFile } : {}),
    }),
    envFor(service): Record<string, string> {
      if (!secure) return { REDIS_URL: urlOf(undefined) }
      if (!secure.principals.includes(service))
        throw new Error(
          `cluster Redis: '${service}' is not one of its users (${secure.principals.join(', ')})`,
        )
      return { REDIS_URL: urlOf(service), REDIS_TLS_CA: secure.ca.caFile }
    },
    sentinels: sentinelAddresses.map(addressText).join(','),
    name,
    sentinelAddresses,
    async stop() {
      await Promise.all(engines.map((engine) => engine.stop()))
    },
  }
}
