// Snapshots of the two stores beside PostgreSQL, by their own tools: Redis' RDB file as a replica receives it
// (`redis-cli --rdb`: the server forks and streams a point-in-time dump, from any host that reaches it), and Consul's
// snapshot (`consul snapshot save`/`restore`: the servers' Raft state, KV and ACLs included). Neither has a
// point-in-time log to replay: a snapshot restores to the moment it was taken.
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { layoutFromEnv } from '../layout.ts'
import { consulBinary } from '../native/consul.ts'
import { run } from '../processes.ts'
import { BackupError } from './postgres-backup.ts'

/** redis-cli's arguments to reach `url` (redis:// or rediss://, with its user, password and database), TLS against `caFile`. */
function redisCliArgs(url: string, caFile: string | undefined): string[] {
  const tls = url.startsWith('rediss://')
  if (tls && !caFile)
    throw new BackupError('a rediss:// URL needs the CA its server certificate is checked against (--ca)')
  return ['-u', url, ...(tls && caFile ? ['--tls', '--cacert', caFile] : []), '--no-auth-warning']
}

/** The Redis at `url` dumped into `file` (RDB); returns its size in bytes. */
export async function saveRedisSnapshot(options: {
  url: string
  file: string
  caFile?: string
}): Promise<number> {
  if (existsSync(options.file))
    throw new BackupError(`${options.file} exists: a snapshot goes into a new file`)
  mkdirSync(dirname(options.file), { recursive: true })
  await run('redis-cli', [...redisCliArgs(options.url, options.caFile), '--rdb', options.file], {
    timeoutMs: 600_000,
  })
  return statSync(options.file).size
}

/**
 * An RDB snapshot placed as `dbfilename` in a Redis server's `dir`, which the server loads when it starts there
 * (stopped first; with appendonly on, a server loads its append-only file instead: start it with appendonly off once,
 * then turn it on with CONFIG SET, which writes the file from the loaded data).
 */
export function placeRedisSnapshot(options: { file: string; dir: string; dbfilename?: string }): string {
  if (!existsSync(options.file)) throw new BackupError(`${options.file} does not exist`)
  mkdirSync(options.dir, { recursive: true })
  const target = join(options.dir, options.dbfilename ?? 'dump.rdb')
  copyFileSync(options.file, target)
  return target
}

/** Consul's variables (address, token, CA) for the `consul` command from `env`. */
const consulEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
  if (!env.CONSUL_HTTP_ADDR)
    throw new BackupError(
      'CONSUL_HTTP_ADDR is not set (and CONSUL_HTTP_TOKEN, CONSUL_CACERT where the agent wants them)',
    )
  return env
}

/** The Consul cluster's snapshot into `file`, through the agent CONSUL_HTTP_ADDR names (a management token's). */
export async function saveConsulSnapshot(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (existsSync(file)) throw new BackupError(`${file} exists: a snapshot goes into a new file`)
  mkdirSync(dirname(file), { recursive: true })
  await run(consulBinary(layoutFromEnv(env)), ['snapshot', 'save', file], { env: consulEnv(env) })
  return statSync(file).size
}

/** A snapshot restored into the Consul cluster CONSUL_HTTP_ADDR reaches: its KV, catalog and ACLs as they were then. */
export async function restoreConsulSnapshot(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  if (!existsSync(file)) throw new BackupError(`${file} does not exist`)
  await run(consulBinary(layoutFromEnv(env)), ['snapshot', 'restore', file], { env: consulEnv(env) })
}
