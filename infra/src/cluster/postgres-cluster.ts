// PostgreSQL on cluster hosts under Patroni (docs/how-to/scaling-out.md, "PostgreSQL"): a Patroni on each host,
// keeping its leader lock in the cluster's Consul. The one holding the lock runs the primary; the others stream from
// it, and a commit returns once one of them has it too (quorum commit, `ANY 1`). When the primary's host dies, its
// Consul session ends with it and the Patroni holding the most WAL promotes its server by itself; the dead host's
// Patroni comes back as a standby of the new primary (pg_rewind, or a new base backup). Nothing here promotes: the
// faults kill hosts, and this module only reads who leads.
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type postgres from 'postgres'
import { type ConsulSettings, consulBaseUrl } from '../consul-http.ts'
import type { Progress } from '../native/engine.ts'
import { PASSWORD, SUPERUSER, serverAccount } from '../native/postgres.ts'
import { clusterRoot, debianPostgresBin, patroniCommand } from '../prepare/patroni.ts'
import { postgresClient, provisionLoginRoles } from '../probes.ts'
import { errorText, run, waitFor } from '../processes.ts'
import type { CertificateAuthority, IssuedCertificate } from '../secure/certificates.ts'
import { instanceCredentials } from '../secure/engine.ts'
import { daemonEngine } from './daemon.ts'
import type { HostEngine } from './engine.ts'
import type { ClusterHost } from './hosts.ts'

const PORT = 5432
/** Patroni's REST API: its health checks, its view of the cluster, and what the members ask each other */
export const PATRONI_API_PORT = 8008
const REPLICATION_USER = 'replicator'
const REPLICATION_PASSWORD = 'replicator'

export interface PostgresClusterOptions {
  prefix: string
  /**
   * how a host's Patroni reaches its own host's Consul agent, its store: the address (`http://` or `https://`), and on
   * a secure cluster the token of the role `patroniConsulRules` describes and the CA
   */
  consulOf(host: ClusterHost): ConsulSettings
  progress?: Progress
  /**
   * TLS from this CA on every connection but the host's own socket: the servers accept no login without it (pg_hba
   * `hostssl`), clients and the members' replication verify the server's name against the CA (`verify-full`). Default
   * plaintext.
   */
  tls?: CertificateAuthority
  /**
   * a login role for each of `principals` (a service), its password made once and kept in `dir`'s credentials.json:
   * what roleUrl() names; a run's database is then given to its service's role (startSystem). Default none.
   */
  roles?: { principals: readonly string[]; dir: string }
}

/** A member as Patroni's `GET /cluster` lists it. */
export interface PatroniMember {
  name: string
  role: 'leader' | 'sync_standby' | 'quorum_standby' | 'replica' | 'standby_leader' | string
  state: string
  host: string
  lag?: number | string
}

export interface PostgresCluster {
  /** ONE multi-host URL for services: whichever server is the primary (target_session_attrs=primary) */
  url(database: string): string
  /** the same URL as a principal's own role (PostgresClusterOptions.roles) */
  roleUrl(principal: string, database: string): string
  /** one Patroni per host (its PostgreSQL is its child), in the hosts' order */
  nodes: HostEngine[]
  /** the members as the Patroni of a live host sees them */
  members(): Promise<PatroniMember[]>
  /** the host whose server leads now; waits while none does (a failover under way), at most `timeoutMs` */
  waitPrimary(options?: { not?: ClusterHost; timeoutMs?: number }): Promise<ClusterHost>
  /** resolves once every host's server runs: the leader, and the others streaming from it, each one of the quorum a
   * commit waits for */
  waitReplicating(timeoutMs?: number): Promise<void>
  /** stops every Patroni (each stops its server) and removes their data (their logs stay) */
  close(): Promise<void>
}

const quiet = { onnotice: () => {} }

/**
 * pg_hba.conf's lines: password (scram) logins and replication from the host, and from the cluster's subnet; over TLS
 * only when `tls` (the unix socket in the member's folder stays: it is the host's own).
 */
function hbaLines(host: ClusterHost, tls: boolean): string[] {
  const subnet = `${host.address.split('.').slice(0, 3).join('.')}.0/24`
  const kind = tls ? 'hostssl' : 'host'
  return [
    'local all all scram-sha-256',
    `${kind} all all 127.0.0.1/32 scram-sha-256`,
    `${kind} all all ${subnet} scram-sha-256`,
    `${kind} replication ${REPLICATION_USER} 127.0.0.1/32 scram-sha-256`,
    `${kind} replication ${REPLICATION_USER} ${subnet} scram-sha-256`,
  ]
}

/** The settings every member runs with, kept in Consul by the first Patroni (bootstrap.dcs). */
const sharedSettings = {
  // two instances of eight services with their pools, and the relays' sessions
  max_connections: 400,
  password_encryption: 'scram-sha-256',
  wal_level: 'replica',
  max_wal_senders: 10,
  max_replication_slots: 10,
  hot_standby: 'on',
  // pg_rewind needs it: an old primary rejoins by rewinding what it wrote after the new one took over
  wal_log_hints: 'on',
  // a replica that is gone keeps its slot's WAL; this bounds it
  max_slot_wal_keep_size: '1GB',
  // a partitioned peer is noticed in seconds, not the default minute
  wal_sender_timeout: '10s',
  wal_receiver_timeout: '10s',
  wal_retrieve_retry_interval: '1s',
  // every host shares this machine's kernel: a killed server's writes are in the page cache, which survives it, so
  // skipping fsync loses nothing a failover claim depends on (a power loss is not one of the faults)
  fsync: 'off',
  // acknowledged once its WAL is written here and on one standby of the quorum
  synchronous_commit: 'on',
}

/** Where Patroni keeps its keys in Consul (`patroni/<scope>/leader`, …). */
const patroniNamespace = 'patroni'

/**
 * The ACL rules of Patroni's Consul token: its keys (the leader lock, the members, the cluster-wide settings), the
 * sessions that hold the lock, and reading the nodes and the agent whose health the session follows.
 */
export const patroniConsulRules = [
  `key_prefix "${patroniNamespace}/" { policy = "write" }`,
  'session_prefix "" { policy = "write" }',
  'node_prefix "" { policy = "read" }',
  'agent_prefix "" { policy = "read" }',
  '',
].join('\n')

/**
 * Patroni's `consul` settings for this agent: its URL, and its token and CA (the copy at `caCopy`, which the server's
 * account reads) when it is secure.
 */
function patroniConsul(settings: ConsulSettings, caCopy: string): Record<string, unknown> {
  return {
    url: consulBaseUrl(settings.address),
    ...(settings.token ? { token: settings.token } : {}),
    ...(settings.caFile ? { cacert: caCopy, verify: true } : {}),
  }
}

/** One host's Patroni configuration (JSON is YAML). */
function patroniConfig(
  host: ClusterHost,
  home: string,
  options: PostgresClusterOptions,
): Record<string, unknown> {
  // the members' own connections to each other (replication, pg_rewind) verify the server as clients do
  const verify = options.tls ? { sslmode: 'verify-full', sslrootcert: join(home, 'ca.pem') } : {}
  const superuser = { username: SUPERUSER, password: PASSWORD, ...verify }
  const tlsParameters = options.tls
    ? { ssl: 'on', ssl_cert_file: join(home, 'server.pem'), ssl_key_file: join(home, 'server-key.pem') }
    : {}
  return {
    scope: `meridian-${options.prefix}`,
    // apart from Meridian's own keys (`meridian/<service>/`, which the gateway's token may write)
    namespace: `/${patroniNamespace}/`,
    name: host.name,
    log: { level: 'INFO' },
    restapi: {
      listen: `${host.address}:${PATRONI_API_PORT}`,
      connect_address: `${host.address}:${PATRONI_API_PORT}`,
    },
    consul: {
      ...patroniConsul(options.consulOf(host), join(home, 'consul-ca.pem')),
      // the session also ends when the host's agent is found dead (its serf health), not only by its TTL: a host
      // that dies gives up the lock in seconds
      checks: ['serfHealth'],
      register_service: false,
    },
    bootstrap: {
      dcs: {
        // Consul's shortest session (10 s, doubled by Consul); the loop checks every second
        ttl: 20,
        loop_wait: 1,
        retry_timeout: 5,
        // quorum commit: synchronous_standby_names = 'ANY 1 (<the standbys>)', so a commit returns once one standby
        // has it; when the primary dies, the Patroni that can see enough of the others to know it holds every
        // acknowledged commit promotes. One standby's loss stalls nothing and leaves a candidate.
        synchronous_mode: 'quorum',
        synchronous_node_count: 1,
        postgresql: { use_pg_rewind: true, use_slots: true, parameters: sharedSettings },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C.UTF-8' }],
    },
    postgresql: {
      listen: `${host.address},127.0.0.1:${PORT}`,
      connect_address: `${host.address}:${PORT}`,
      data_dir: join(home, 'data'),
      bin_dir: debianPostgresBin,
      pgpass: join(home, 'pgpass'),
      authentication: {
        superuser,
        replication: { username: REPLICATION_USER, password: REPLICATION_PASSWORD, ...verify },
        rewind: superuser,
      },
      // the socket in the member's own folder: the hosts share one file system
      parameters: { unix_socket_directories: home, cluster_name: host.name, ...tlsParameters },
      pg_hba: hbaLines(host, options.tls !== undefined),
      basebackup: [{ checkpoint: 'fast' }],
      remove_data_directory_on_rewind_failure: true,
      remove_data_directory_on_diverged_timelines: true,
    },
  }
}

async function patroniGet<T>(host: ClusterHost, path: string): Promise<T> {
  const response = await fetch(`http://${host.address}:${PATRONI_API_PORT}${path}`, {
    signal: AbortSignal.timeout(3000),
  })
  if (!response.ok) throw new Error(`${host.name} patroni: GET ${path} answered ${response.status}`)
  return (await response.json()) as T
}

/** Where the cluster `prefix`'s member on `host` keeps its Patroni configuration, log and data directory. */
const memberHome = (prefix: string, host: ClusterHost) => join(clusterRoot(), prefix, host.name, 'postgres')

/** A Patroni on `host` as a HostEngine: ready once its server runs (as leader or replica). */
function patroniNode(
  host: ClusterHost,
  options: PostgresClusterOptions,
  account: { uid: number; gid: number } | undefined,
  certificate: IssuedCertificate | undefined,
): HostEngine {
  const home = memberHome(options.prefix, host)
  const configFile = join(home, 'patroni.yml')
  return daemonEngine({
    name: 'postgres',
    host,
    dir: home,
    logFile: join(home, 'patroni.log'),
    daemon: async () => {
      writeFileSync(configFile, JSON.stringify(patroniConfig(host, home, options), null, 2))
      // the server's key, certificate and the CA in the member's folder, owned by the server's account below (the
      // server refuses a key others may read)
      if (certificate && options.tls) {
        copyFileSync(certificate.certFile, join(home, 'server.pem'))
        copyFileSync(certificate.keyFile, join(home, 'server-key.pem'))
        chmodSync(join(home, 'server-key.pem'), 0o600)
        copyFileSync(options.tls.caFile, join(home, 'ca.pem'))
      }
      // the CA Patroni checks its Consul agent against, where the server's account can read it
      const consulCa = options.consulOf(host).caFile
      if (consulCa) copyFileSync(consulCa, join(home, 'consul-ca.pem'))
      if (account) await run('chown', ['-R', `${account.uid}:${account.gid}`, home])
      chmodSync(home, 0o700)
      return {
        command: patroniCommand(),
        args: [configFile],
        cwd: home,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' },
        ...(account ?? {}),
      }
    },
    // 200 once its PostgreSQL runs, whatever its role
    ready: () => patroniGet(host, '/health'),
    readyTimeoutMs: 120_000,
    // SIGTERM: Patroni stops its server (fast shutdown) and hands the lock back
    stopSignal: 'SIGTERM',
    stopGraceMs: 30_000,
  })
}

/**
 * A Patroni on each of `hosts` (the first to take the lock initialises the database, the others copy it), all new:
 * what an earlier cluster with this prefix left on these hosts is removed. Resolves once each server runs and the
 * replicas stream.
 */
export async function startPostgresCluster(
  hosts: ClusterHost[],
  options: PostgresClusterOptions,
): Promise<PostgresCluster> {
  const progress = options.progress ?? (() => {})
  const account = await serverAccount()
  for (const host of hosts) {
    const home = memberHome(options.prefix, host)
    rmSync(home, { recursive: true, force: true })
    mkdirSync(home, { recursive: true })
  }
  // one server certificate naming every host's address and the host's own loopback (Patroni connects to 'localhost')
  const certificate = await options.tls?.server('postgres', [
    ...hosts.map((host) => host.address),
    '127.0.0.1',
    'localhost',
  ])
  const nodes = hosts.map((host) => patroniNode(host, options, account, certificate))
  const tlsQuery = options.tls
    ? `&sslmode=verify-full&sslrootcert=${encodeURIComponent(options.tls.caFile).replaceAll('%2F', '/')}`
    : ''
  const onServer = <T>(host: ClusterHost, work: (sql: postgres.Sql) => Promise<T>) =>
    onOneServer(host, tlsQuery, work)
  const live = () => nodes.filter((node) => node.pid() !== undefined)

  async function members(): Promise<PatroniMember[]> {
    let lastError: unknown = new Error('no Patroni runs')
    for (const node of live()) {
      try {
        return (await patroniGet<{ members: PatroniMember[] }>(node.host, '/cluster')).members
      } catch (error) {
        lastError = error
      }
    }
    throw lastError
  }

  const hostNamed = (name: string) => {
    const host = hosts.find((each) => each.name === name)
    if (!host) throw new Error(`postgres: Patroni names a member ${name} that is not a host`)
    return host
  }

  async function waitPrimary({ not, timeoutMs = 60_000 }: { not?: ClusterHost; timeoutMs?: number } = {}) {
    return waitFor(
      not ? `a PostgreSQL primary other than ${not.name}'s` : 'a PostgreSQL primary',
      async () => {
        const leader = (await members()).find(
          (member) => member.role === 'leader' && member.state === 'running',
        )
        if (!leader) throw new Error('no leader')
        const host = hostNamed(leader.name)
        if (host === not) throw new Error(`${host.name} still leads`)
        // the lock is not enough: the server must have left recovery
        await onServer(host, async (sql) => {
          const [row] = await sql<{ recovering: boolean }[]>`select pg_is_in_recovery() as recovering`
          if (row?.recovering !== false) throw new Error(`${host.name} still in recovery`)
        })
        return host
      },
      { timeoutMs, intervalMs: 200 },
    )
  }

  async function waitReplicating(timeoutMs = 120_000): Promise<void> {
    await waitFor(
      `postgres: a leader and ${hosts.length - 1} streaming replica(s)`,
      async () => {
        const listed = await members()
        const leaders = listed.filter((member) => member.role === 'leader' && member.state === 'running')
        const streaming = listed.filter((member) => member.state === 'streaming')
        if (leaders.length !== 1 || streaming.length !== hosts.length - 1)
          throw new Error(listed.map((member) => `${member.name} ${member.role}/${member.state}`).join(', '))
        // each in the set a commit waits for (`ANY 1 (…)`), not only streaming
        if (!streaming.every((member) => member.role === 'quorum_standby'))
          throw new Error(
            `not every standby in the quorum yet: ${streaming.map((member) => `${member.name} ${member.role}`).join(', ')}`,
          )
      },
      { timeoutMs, intervalMs: 250 },
    )
  }

  const hostList = hosts.map((host) => `${host.address}:${PORT}`).join(',')
  const urlAs = (user: string, password: string, database: string) =>
    `postgres://${user}:${password}@${hostList}/${database}?target_session_attrs=primary${tlsQuery}`
  const rolePasswords = options.roles
    ? instanceCredentials(options.roles.dir, options.roles.principals)
    : ({} as Readonly<Record<string, string>>)
  const cluster: PostgresCluster = {
    // `primary`, not `read-write`: postgres.js 3.4 takes a server for read-write when its default_transaction_read_only
    // is off, which a hot standby's is; `primary` looks at in_hot_standby (libpq reads both the same way)
    url: (database) => urlAs(SUPERUSER, PASSWORD, database),
    roleUrl(principal, database) {
      const password = rolePasswords[principal]
      if (password === undefined) throw new Error(`postgres cluster: no role for '${principal}'`)
      return urlAs(principal, password, database)
    },
    nodes,
    members,
    waitPrimary,
    waitReplicating,
    async close() {
      await Promise.all(nodes.map((node) => node.stop()))
      for (const host of hosts)
        rmSync(join(memberHome(options.prefix, host), 'data'), {
          recursive: true,
          force: true,
        })
    },
  }
  try {
    progress(`postgres: Patroni on ${hosts.map((host) => host.name).join(', ')}`)
    // the first alone: it takes the lock and initialises; the others then copy its data
    const [first, ...others] = nodes
    await first?.start()
    await Promise.all(others.map((node) => node.start()))
    await waitReplicating()
    await provisionLoginRoles(cluster.url('postgres'), rolePasswords)
  } catch (error) {
    await Promise.all(nodes.map((node) => node.stop().catch(() => {})))
    throw new Error(
      `postgres cluster: ${errorText(error)} (logs: ${nodes.map((node) => node.logFile).join(', ')})`,
    )
  }
  return cluster
}

/** Runs statements on one server over a connection of their own (`tlsQuery`: the URL's TLS parameters, or ''). */
async function onOneServer<T>(
  host: ClusterHost,
  tlsQuery: string,
  work: (sql: postgres.Sql) => Promise<T>,
): Promise<T> {
  const sql = postgresClient(
    `postgres://${SUPERUSER}:${PASSWORD}@${host.address}:${PORT}/postgres?${tlsQuery.slice(1)}`,
    {
      max: 1,
      connect_timeout: 3,
      ...quiet,
    },
  )
  try {
    return await work(sql)
  } finally {
    await sql.end({ timeout: 2 })
  }
}
