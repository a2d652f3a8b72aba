// Health, version and provisioning of each engine, asked from the engine itself. The same for every mode.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto'
import type { ConnectionOptions } from 'node:tls'
import { type KafkaSecurity, kafkajsSecurity, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { connectionOptionsOf } from '@meridian/postgres-connection'
import { Redis } from 'ioredis'
import { Kafka, logLevel } from 'kafkajs'
import postgres from 'postgres'
import { type ConsulSettings, consulBaseUrl, consulRequest } from './consul-http.ts'
import { repoRoot } from './layout.ts'
import { databasesOf, readManifest } from './manifest/manifest.ts'
import { waitFor } from './processes.ts'
import type { TopicSpec } from './topics.ts'

/**
 * The database of each service that has one, by service (docs/explanation/architecture.md, "The processes"; the gateway has none):
 * as each service declares it in its package.json's "meridian" field (the services' manifest).
 */
export const databaseOfService: Readonly<Record<string, string>> = databasesOf(readManifest(repoRoot))

/** The database of `service`; throws for a service without one (the gateway). */
export function databaseOf(service: string): string {
  const database = databaseOfService[service]
  if (database === undefined)
    throw new Error(`'${service}' has no database (its package.json's "meridian" field declares none)`)
  return database
}

/** The database of each service. */
export const serviceDatabases = Object.values(databaseOfService)

/**
 * The variable that gives a service its own database's URL, `<SERVICE>_DATABASE_URL` (`realtime-gateway`:
 * REALTIME_GATEWAY_DATABASE_URL): its dev and migrate scripts read it, never the server's DATABASE_URL.
 */
export const databaseVariableOf = (service: string): string =>
  `${service.toUpperCase().replaceAll('-', '_')}_DATABASE_URL`

const quiet = { onnotice: () => {} }

/** postgres.js' options, but for `ssl`: that comes from the URL's libpq parameters */
export type PostgresClientOptions = Omit<postgres.Options<Record<string, postgres.PostgresType>>, 'ssl'>

/**
 * A postgres.js client on `url` with libpq's TLS parameters (sslmode, sslrootcert, sslcert, sslkey) applied, as
 * @meridian/db's createDatabase applies them: every connection infra makes to PostgreSQL goes through here.
 */
export function postgresClient(url: string, options: PostgresClientOptions = {}): postgres.Sql {
  const connection = connectionOptionsOf(url)
  return postgres(connection.url, {
    ...options,
    ...(connection.ssl === undefined ? {} : { ssl: connection.ssl }),
  })
}

export async function postgresVersion(url: string): Promise<string> {
  const sql = postgresClient(url, { max: 1, connect_timeout: 3, idle_timeout: 1, ...quiet })
  try {
    const [row] = await sql<{ server_version: string }[]>`show server_version`
    return `PostgreSQL ${row?.server_version.split(' ')[0]}`
  } finally {
    await sql.end({ timeout: 1 })
  }
}

/** Creates each database that does not exist yet. */
export async function createDatabases(url: string, names: readonly string[]): Promise<string[]> {
  const sql = postgresClient(url, { max: 1, connect_timeout: 5, ...quiet })
  try {
    const existing = new Set(
      (await sql<{ datname: string }[]>`select datname from pg_database`).map((row) => row.datname),
    )
    const created: string[] = []
    for (const name of names) {
      if (existing.has(name)) continue
      try {
        await sql`create database ${sql(name)}`
        created.push(name)
      } catch (error) {
        // another starter created it in between
        if ((error as { code?: string }).code !== '42P04') throw error
      }
    }
    return created
  } finally {
    await sql.end({ timeout: 2 })
  }
}

/** A password provisionServiceRoles accepts: base64url (it reaches DDL as a literal), long enough to be a secret. */
const rolePasswordPattern = /^[A-Za-z0-9_-]{16,256}$/

/**
 * The SCRAM-SHA-256 verifier of a password (RFC 5802/7677, as PostgreSQL stores it): what `alter role … password` is
 * given, so that the password itself never reaches the server, its statement log or pg_stat_activity.
 */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256')
  const clientKey = createHmac('sha256', salted).update('Client Key').digest()
  const storedKey = createHash('sha256').update(clientKey).digest()
  const serverKey = createHmac('sha256', salted).update('Server Key').digest()
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`
}

const quoteIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`

/**
 * A login role per service (named as the service, `passwords[service]` its password) owning that service's
 * database (databaseOfService), created when missing, and that database's public schema; CONNECT and TEMPORARY on
 * every service database taken from PUBLIC, so a role cannot even connect to another service's database. The roles
 * get no other right: not superuser, no CREATEDB, no CREATEROLE, no replication. Run again, it sets the same (a new
 * password included). `adminUrl`: a superuser's URL (its libpq TLS parameters apply) on the server's maintenance
 * database. Objects already in a database that another role made stay that role's (docs/how-to/deploying.md).
 */
export async function provisionServiceRoles(
  adminUrl: string,
  passwords: Readonly<Record<string, string>>,
): Promise<void> {
  const services = Object.keys(passwords)
  for (const service of services)
    if (!Object.hasOwn(databaseOfService, service))
      throw new Error(`'${service}' is not a service with a database`)
  assertRolePasswords(passwords)
  const sql = postgresClient(adminUrl, { max: 1, connect_timeout: 5, ...quiet })
  try {
    for (const service of services) {
      const role = quoteIdentifier(service)
      const database = databaseOf(service)
      await setLoginRole(sql, service, passwords[service] ?? '')
      const [databaseExists] = await sql`select 1 from pg_database where datname = ${database}`
      try {
        if (databaseExists) await sql.unsafe(`alter database ${quoteIdentifier(database)} owner to ${role}`)
        else await sql.unsafe(`create database ${quoteIdentifier(database)} owner ${role}`)
      } catch (error) {
        // another starter created it in between: it is given to the role below
        if ((error as { code?: string }).code !== '42P04') throw error
        await sql.unsafe(`alter database ${quoteIdentifier(database)} owner to ${role}`)
      }
      // the public schema is the role's own: before PostgreSQL 15 everyone could create in it, from 15 on it belongs
      // to pg_database_owner (the database's owner, so the role, already); owning it says so on any version
      const inDatabase = postgresClient(databaseUrl(adminUrl, database), {
        max: 1,
        connect_timeout: 5,
        ...quiet,
      })
      try {
        await inDatabase.unsafe(`alter schema public owner to ${role}`)
        await inDatabase.unsafe('revoke all on schema public from public')
      } finally {
        await inDatabase.end({ timeout: 2 })
      }
    }
    const existing = await sql<{ datname: string }[]>`
      select datname from pg_database where datname in ${sql(serviceDatabases)}`
    for (const { datname } of existing)
      await sql.unsafe(`revoke all on database ${quoteIdentifier(datname)} from public`)
  } finally {
    await sql.end({ timeout: 2 })
  }
}

/**
 * A login role per entry of `passwords` (role name → password) with the rights provisionServiceRoles gives and
 * nothing else, created when missing, its password set again when present: where the databases are made later and
 * given to the roles then (the cluster's runs, infra/src/cluster/postgres-cluster.ts).
 */
export async function provisionLoginRoles(
  adminUrl: string,
  passwords: Readonly<Record<string, string>>,
): Promise<void> {
  assertRolePasswords(passwords)
  if (Object.keys(passwords).length === 0) return
  const sql = postgresClient(adminUrl, { max: 1, connect_timeout: 5, ...quiet })
  try {
    for (const [name, password] of Object.entries(passwords)) await setLoginRole(sql, name, password)
  } finally {
    await sql.end({ timeout: 2 })
  }
}

function assertRolePasswords(passwords: Readonly<Record<string, string>>): void {
  for (const [name, password] of Object.entries(passwords))
    if (!rolePasswordPattern.test(password))
      throw new Error(`the password of '${name}' must be 16 to 256 base64url characters`)
}

/** Creates or alters the login role `name`: the SCRAM verifier of `password`, no superuser, CREATEDB, CREATEROLE, replication or BYPASSRLS. */
async function setLoginRole(sql: postgres.Sql, name: string, password: string): Promise<void> {
  // the verifier is base64 and `$:`: a literal without quotes to escape
  const rights = `login nosuperuser nocreatedb nocreaterole noreplication nobypassrls password '${scramVerifier(password)}'`
  const [roleExists] = await sql`select 1 from pg_roles where rolname = ${name}`
  await sql.unsafe(`${roleExists ? 'alter' : 'create'} role ${quoteIdentifier(name)} with ${rights}`)
}

/** What editPostgresUrl may change in a server's URL. */
export interface PostgresUrlChanges {
  database?: string
  username?: string
  password?: string
}

/** `postgres://[userinfo@]hosts[/path][?query][#fragment]`; hosts may be a list (`h1:5432,h2:5432`) */
const postgresUrlShape = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/s
/** a placeholder host while the WHATWG parser edits the rest: it refuses a host list */
const oneHost = 'postgres-url-host.invalid'

/**
 * Changes the database, user or password of a PostgreSQL URL, keeping everything else as written: also a multi-host
 * URL (`postgres://u:p@h1:5432,h2:5432/db?target_session_attrs=primary`, one a client fails over with), which
 * `new URL()` refuses. The host list is bounded: at most 16 hosts of at most 255 characters each.
 */
export function editPostgresUrl(serverUrl: string, changes: PostgresUrlChanges): string {
  const match = serverUrl.length <= 8192 ? postgresUrlShape.exec(serverUrl) : null
  if (!match) throw new Error('not a PostgreSQL URL (postgres://[user[:password]@]host[:port][,…]/database)')
  const [, scheme = '', userinfo, hostList = '', rest = ''] = match
  const hosts = hostList.split(',')
  if (hosts.length > 16 || hosts.some((host) => host.length === 0 || host.length > 255))
    throw new Error('a PostgreSQL URL names 1 to 16 hosts, none empty')
  const url = new URL(`${scheme}${userinfo === undefined ? '' : `${userinfo}@`}${oneHost}${rest}`)
  if (changes.database !== undefined) url.pathname = `/${changes.database}`
  if (changes.username !== undefined) url.username = changes.username
  if (changes.password !== undefined) url.password = changes.password
  return url.toString().replace(oneHost, hostList)
}

/** URL of one database on the server (or servers, a multi-host URL) that serverUrl points at. */
export function databaseUrl(serverUrl: string, database: string): string {
  return editPostgresUrl(serverUrl, { database })
}

/**
 * A client of infra's tools. `security`: the TLS and SASL a secure broker asks for, as the services' clients get them
 * (kafkaSecurityFromEnv of the same KAFKA_TLS* and KAFKA_SASL_* variables); none for a plaintext broker.
 */
export function kafkaClient(
  brokers: string,
  clientId = 'meridian-infra',
  security: KafkaSecurity = {},
): Kafka {
  return new Kafka({
    clientId,
    brokers: brokers.split(',').map((b) => b.trim()),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3000,
    retry: { retries: 2, initialRetryTime: 200 },
    ...kafkajsSecurity(security),
  })
}

/**
 * A client of the broker `env` names (KAFKA_BROKERS), with the TLS and SASL its KAFKA_TLS* and KAFKA_SASL_* variables
 * say, as a service's: what a test gets from a run's engine variables, plaintext or secure alike.
 */
export function kafkaClientOfEnv(env: Readonly<Record<string, string | undefined>>, clientId: string): Kafka {
  return kafkaClient(env.KAFKA_BROKERS ?? '', clientId, kafkaSecurityFromEnv(env))
}

export async function kafkaCluster(
  brokers: string,
  security: KafkaSecurity = {},
): Promise<{ brokers: number; controller: number | null }> {
  const admin = kafkaClient(brokers, undefined, security).admin()
  await admin.connect()
  try {
    const cluster = await admin.describeCluster()
    return { brokers: cluster.brokers.length, controller: cluster.controller }
  } finally {
    await admin.disconnect()
  }
}

/** How new topics are replicated: on one broker 1 and 1, on a three-broker cluster 3 and 2. */
export interface TopicReplication {
  /** copies of each partition; default 1 */
  replicationFactor?: number
  /** in-sync copies an acks=all write needs (the topic's min.insync.replicas); default the broker's */
  minInsyncReplicas?: number
}

/**
 * The replication a cluster of `brokers` brokers gets: on three or more, three copies of which two must hold an
 * acks=all write (docs/how-to/scaling-out.md); on fewer, one copy, as on the development broker.
 */
export function replicationForBrokers(brokers: number): Required<TopicReplication> {
  return brokers >= 3
    ? { replicationFactor: 3, minInsyncReplicas: 2 }
    : { replicationFactor: 1, minInsyncReplicas: 1 }
}

/** Creates every declared topic that is missing; existing topics are left as they are. `security`: as kafkaClient's. */
export async function createTopics(
  brokers: string,
  topics: TopicSpec[],
  replication: TopicReplication = {},
  security: KafkaSecurity = {},
): Promise<string[]> {
  const { replicationFactor = 1, minInsyncReplicas } = replication
  const configEntries =
    minInsyncReplicas === undefined ? [] : [{ name: 'min.insync.replicas', value: String(minInsyncReplicas) }]
  const admin = kafkaClient(brokers, undefined, security).admin()
  await admin.connect()
  try {
    const existing = new Set(await admin.listTopics())
    const missing = topics.filter((topic) => !existing.has(topic.name))
    if (missing.length > 0) {
      await admin.createTopics({
        // kafkajs' own wait asks one broker once per retry: on a cluster, a broker the new topic has not reached yet
        // answers UNKNOWN_TOPIC_OR_PARTITION and the wait fails although the topic was made. We wait below instead.
        waitForLeaders: false,
        topics: missing.map((topic) => ({
          topic: topic.name,
          numPartitions: topic.partitions,
          replicationFactor,
          configEntries,
        })),
      })
      const names = missing.map((topic) => topic.name)
      await waitFor(
        'the new topics to have leaders',
        async () => {
          const { topics: described } = await admin.fetchTopicMetadata({ topics: names })
          if (described.some((topic) => topic.partitions.some((partition) => partition.leader < 0)))
            throw new Error('a partition has no leader yet')
        },
        // A broker answers for a new topic once it has applied the records that made it, after the creations before
        // them: on a cluster of a loaded 2-core machine, some hundreds of partitions of three copies each took a broker
        // over 30 s (CI, the cluster test). A wait by condition, so the bound is generous; a healthy cluster is quick.
        { timeoutMs: 120_000, intervalMs: 250 },
      )
    }
    return missing.map((topic) => topic.name)
  } finally {
    await admin.disconnect()
  }
}

/**
 * Consul answers with a leader once its raft is ready; the version comes from the agent's own config (which needs
 * `agent:read` where ACLs are on: an administrator's token, or the anonymous token of an agent without ACLs).
 */
export async function consulVersion(consul: ConsulSettings): Promise<string> {
  const base = consulBaseUrl(consul.address)
  const leader = await consulRequest(consul, 'GET', '/v1/status/leader', { timeoutMs: 3000 })
  const leaderText = leader.text.replaceAll('"', '')
  if (leader.status !== 200 || leaderText === '') throw new Error(`consul at ${base} has no leader yet`)
  const self = await consulRequest(consul, 'GET', '/v1/agent/self', { timeoutMs: 3000 })
  if (self.status !== 200) throw new Error(`consul at ${base}: /v1/agent/self answered ${self.status}`)
  const body = JSON.parse(self.text) as { Config?: { Version?: string } }
  return `Consul ${body.Config?.Version ?? 'unknown'}`
}

/** Redis' version, asked as the URL's user (INFO: an administrator's command); over TLS with `tls` (rediss://). */
export async function redisVersion(url: string, tls?: ConnectionOptions): Promise<string> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    ...(tls ? { tls } : {}),
  })
  redis.on('error', () => {}) // the failed connect() below carries the error
  try {
    await redis.connect()
    const info = await redis.info('server')
    return `Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown'}`
  } finally {
    redis.disconnect()
  }
}
