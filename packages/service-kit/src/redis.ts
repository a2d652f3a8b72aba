// The Redis client every service uses (rate limits, sessions, caches): one place for the options that matter, TLS and
// the service's own user included (REDIS_URL rediss://user:password@host:port, REDIS_TLS_CA / _CERT / _KEY), and the
// sentinels when the primary is found through them (REDIS_SENTINELS, REDIS_NAME).
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import { Redis, type RedisOptions } from 'ioredis'
import { ConfigError } from './config.ts'

/** ServiceEnv's TLS variables: paths of PEM files, read once when the client is made. */
export interface RedisTlsFiles {
  /** the CA the server's certificate is checked against (unset: the system's CAs) */
  REDIS_TLS_CA?: string | undefined
  /** a client certificate and its key, for a server that asks for one (mutual TLS) */
  REDIS_TLS_CERT?: string | undefined
  REDIS_TLS_KEY?: string | undefined
}

/** ServiceEnv's sentinel variables: unset REDIS_SENTINELS means one server, at REDIS_URL's host. */
export interface RedisSentinelVariables {
  REDIS_SENTINELS?: string | undefined
  REDIS_NAME?: string | undefined
}

export interface ServiceRedisOptions {
  /** shown by CLIENT LIST, so an operator can tell which service holds a connection */
  connectionName: string
  /** prepended to every key (tests and benchmarks isolate their keys with it) */
  keyPrefix?: string
  /** the configuration's REDIS_TLS_* (a service passes its config) */
  tls?: RedisTlsFiles
  /** the configuration's REDIS_SENTINELS and REDIS_NAME (a service passes its config) */
  sentinel?: RedisSentinelVariables
}

/** REDIS_SENTINELS' entries (`host:port`, an IPv6 address in brackets), as ioredis takes them. */
export function sentinelAddresses(value: string): { host: string; port: number }[] {
  return value.split(',').map((entry) => {
    const at = entry.lastIndexOf(':')
    const host = entry.slice(0, at)
    const port = Number(entry.slice(at + 1))
    if (at <= 0 || !Number.isInteger(port) || port < 1 || port > 65535)
      throw new ConfigError([`REDIS_SENTINELS: '${entry}' is not host:port`])
    return { host: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host, port }
  })
}

/**
 * What REDIS_URL gives a client that finds its server through the sentinels: the user, the password and the database
 * (its host and port are the sentinels' to say).
 */
function credentialsOf(url: string): Pick<RedisOptions, 'username' | 'password' | 'db'> {
  const parsed = new URL(url)
  const db = parsed.pathname.replace(/^\//, '')
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
  }
}

const certificatePem = /-----BEGIN CERTIFICATE-----/
/** PKCS#8 (plain or encrypted), or the older PKCS#1 RSA and SEC 1 EC keys */
const privateKeyPem = /-----BEGIN (?:ENCRYPTED |RSA |EC )?PRIVATE KEY-----/

function pemFile(variable: keyof RedisTlsFiles, path: string, expected: RegExp, what: string): string {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error)
    throw new ConfigError([`${variable}: cannot read '${path}' (${code})`])
  }
  if (!expected.test(text)) throw new ConfigError([`${variable}: '${path}' holds no PEM ${what}`])
  return text
}

/** The URL's host as a TLS server name: a DNS name, never an address (RFC 6066 forbids those in SNI). */
function serverNameOf(url: string): string | undefined {
  let host: string
  try {
    host = new URL(url).hostname
  } catch {
    return undefined
  }
  // an IPv6 address comes in brackets
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  return bare !== '' && isIP(bare) === 0 ? bare : undefined
}

/**
 * ioredis' `tls` for this URL and these files: on for rediss:// (the server checked against REDIS_TLS_CA, or the
 * system's CAs, at the URL's host), off for redis://. A file given for a plaintext URL, half a client certificate, or a
 * file that cannot be read or holds no PEM is a ConfigError naming the variable.
 */
export function redisTlsOptions(url: string, files: RedisTlsFiles = {}): ConnectionOptions | undefined {
  const given = (['REDIS_TLS_CA', 'REDIS_TLS_CERT', 'REDIS_TLS_KEY'] as const).filter((name) => files[name])
  if (!url.startsWith('rediss://')) {
    if (given.length === 0) return undefined
    throw new ConfigError(
      given.map(
        (name) => `${name}: given, but REDIS_URL is not rediss:// (TLS): set REDIS_URL to rediss://…`,
      ),
    )
  }
  if (Boolean(files.REDIS_TLS_CERT) !== Boolean(files.REDIS_TLS_KEY)) {
    throw new ConfigError([
      `${files.REDIS_TLS_CERT ? 'REDIS_TLS_KEY' : 'REDIS_TLS_CERT'}: required with ${files.REDIS_TLS_CERT ? 'REDIS_TLS_CERT' : 'REDIS_TLS_KEY'} (a client certificate and its key)`,
    ])
  }
  const servername = serverNameOf(url)
  return {
    ...(servername ? { servername } : {}),
    ...(files.REDIS_TLS_CA
      ? { ca: pemFile('REDIS_TLS_CA', files.REDIS_TLS_CA, certificatePem, 'certificate') }
      : {}),
    ...(files.REDIS_TLS_CERT && files.REDIS_TLS_KEY
      ? {
          cert: pemFile('REDIS_TLS_CERT', files.REDIS_TLS_CERT, certificatePem, 'certificate'),
          key: pemFile('REDIS_TLS_KEY', files.REDIS_TLS_KEY, privateKeyPem, 'private key'),
        }
      : {}),
  }
}

/** Its `duplicate()`s (subscribers, the Socket.IO adapter's connection) keep these options, TLS included. */
export function createRedis(url: string, options: ServiceRedisOptions): Redis {
  const tls = redisTlsOptions(url, options.tls)
  const redisOptions: RedisOptions = {
    connectionName: options.connectionName,
    // Commands issued in the same event-loop tick leave in one write: under load every request's rate-limit
    // script shares a syscall and a round trip with its neighbours' instead of paying for its own.
    enableAutoPipelining: true,
    // a request waiting on Redis fails fast (the rate limiter then lets it through) instead of queueing forever
    maxRetriesPerRequest: 2,
    // ioredis' ready check (INFO, which every service's user may run: docs/how-to/deploying.md, Redis over TLS with a user per
    // service) stays on: a connection is ready only once Redis answers on it. Without it, a Redis behind a proxy that
    // accepts and then closes every connection made each reconnection 'ready' at once, which reset the count of
    // retries, so a command waiting on Redis was resent forever instead of failing after maxRetriesPerRequest
    ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}),
    ...(tls ? { tls } : {}),
  }
  const sentinels = options.sentinel?.REDIS_SENTINELS
  if (!sentinels) return new Redis(url, redisOptions)
  // Through the sentinels: ioredis asks them for the primary, connects to it, and asks again whenever the connection
  // is lost or the server it reaches answers as a replica (after a failover), so every command goes to the primary of
  // the moment. The servers' user and password are REDIS_URL's; the sentinels are reached the same way (TLS with
  // rediss://), without a user of their own.
  return new Redis({
    ...redisOptions,
    ...credentialsOf(url),
    sentinels: sentinelAddresses(sentinels),
    name: options.sentinel?.REDIS_NAME ?? 'meridian',
    ...(tls ? { enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
  })
}
