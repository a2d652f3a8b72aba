// One secure Redis (issue 45): Debian's redis-server reached over TLS only (no plaintext port), the server's certificate
// from the run's CA, client certificates accepted but not required, the default user off, an administrator, and one
// ACL user per service limited to its declared keys and channels (redis-acl.ts), in an aclfile of the instance folder.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isRedisService, type RedisPrefixes } from '@meridian/contracts'
import { PidFile } from '../native/engine.ts'
import { assertRedisServer, redisServerArgs } from '../native/redis.ts'
import { redisVersion } from '../probes.ts'
import { errorText, isAlive, startDaemon, waitFor } from '../processes.ts'
import {
  instanceCredentials,
  type SecureEngineAccess,
  type SecureEngineInstance,
  type SecureEngineOptions,
  serverHosts,
} from './engine.ts'
import { passwordHashRule, redisAclLines, redisAdminUser } from './redis-acl.ts'

export interface SecureRedisOptions extends SecureEngineOptions<{ redis: number }> {
  /** the prefixes the services are configured with (REALTIME_REDIS_PREFIX, CONTENT_PUBSUB_PREFIX); the defaults when unset */
  prefixes?: Partial<RedisPrefixes>
}

const startTimeoutMs = 30_000

/** An address in a URL: IPv6 in brackets. */
const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host)

function logTail(file: string): string {
  return existsSync(file)
    ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-20).join('\n')
    : '(no log)'
}

/**
 * Starts the instance in `options.dir` on `options.host`:`options.ports.redis` and resolves once the administrator
 * gets an answer over TLS. A principal without declared access (redisAccess) is refused before anything starts.
 */
export async function startSecureRedis(options: SecureRedisOptions): Promise<SecureEngineInstance> {
  assertRedisServer()
  const { dir, ca, host, principals } = options
  const port = options.ports.redis
  const pidFile = new PidFile(dir)
  const undeclared = principals.filter((principal) => !isRedisService(principal))
  if (undeclared.length > 0) {
    throw new Error(
      `secure Redis: no Redis access is declared for ${undeclared.map((name) => `'${name}'`).join(', ')}`,
    )
  }
  const running = pidFile.live()
  if (running !== undefined) throw new Error(`a secure Redis already runs on ${dir} (pid ${running})`)

  const credentials = instanceCredentials(dir, [redisAdminUser, ...principals])
  const passwordOf = (user: string): string => {
    const password = credentials[user]
    if (password === undefined) throw new Error(`secure Redis: '${user}' is not one of its principals`)
    return password
  }
  // the users' passwords as SHA-256 only; readable by the owner alone, as redis-server reads it
  const aclFile = join(dir, 'users.acl')
  const acl = redisAclLines({
    passwordRule: (user) => passwordHashRule(passwordOf(user)),
    services: principals,
    ...(options.prefixes ? { prefixes: options.prefixes } : {}),
  })
  writeFileSync(aclFile, `${acl.join('\n')}\n`, { mode: 0o600 })
  chmodSync(aclFile, 0o600)

  const certificate = await ca.server('redis', serverHosts(options))
  const logFile = join(dir, 'redis.log')
  const pid = startDaemon({
    command: 'redis-server',
    args: [
      ...redisServerArgs({ bind: [host], dir, port: 0 }),
      '--tls-port',
      String(port),
      '--tls-cert-file',
      certificate.certFile,
      '--tls-key-file',
      certificate.keyFile,
      '--tls-ca-cert-file',
      ca.caFile,
      // a client certificate is checked against the CA when one is sent; the users' passwords are what is required
      '--tls-auth-clients',
      'optional',
      '--aclfile',
      aclFile,
    ],
    logFile,
    cwd: dir,
  })
  pidFile.write(pid)

  const access = secureRedisAccess(options)
  const stop = async (): Promise<void> => {
    await pidFile.stop('SIGTERM', 10_000)
  }
  try {
    await waitFor('secure redis', () => redisVersion(access.adminEnv().REDIS_URL ?? '', { ca: ca.caPem() }), {
      timeoutMs: startTimeoutMs,
      alive: () => isAlive(pid),
    })
  } catch (error) {
    await stop()
    throw new Error(`${errorText(error)}\nlast lines of ${logFile}:\n${logTail(logFile)}`)
  }

  return { pid, logFile, envFor: access.envFor, adminEnv: access.adminEnv, stop }
}

/**
 * The users' passwords (made on first use, kept in the folder's credentials.json) and the variables they give:
 * `rediss://<user>:<password>@host:port` and the CA.
 */
export function secureRedisAccess(options: SecureEngineOptions<{ redis: number }>): SecureEngineAccess {
  const { dir, ca, host, principals } = options
  const credentials = instanceCredentials(dir, [redisAdminUser, ...principals])
  const urlOf = (user: string): string =>
    `rediss://${user}:${encodeURIComponent(credentials[user] ?? '')}@${urlHost(host)}:${options.ports.redis}`
  const envOf = (user: string): Record<string, string> => ({
    REDIS_URL: urlOf(user),
    REDIS_TLS_CA: ca.caFile,
  })
  return {
    envFor(principal) {
      if (principal === redisAdminUser || !principals.includes(principal)) {
        throw new Error(
          `secure Redis: '${principal}' is not one of its principals (${principals.join(', ')})`,
        )
      }
      return envOf(principal)
    },
    adminEnv: () => envOf(redisAdminUser),
  }
}
