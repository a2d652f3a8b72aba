// Redis' users from the services' declared access (@meridian/contracts' redisAccess): one ACL user per service,
// limited to its keys and channels, an administrator for provisioning and tools, and the default user off. The secure
// Redis writes them as its aclfile; `scripts/infra redis-acl` prints them for a Redis of one's own (docs/how-to/deploying.md).
import { createHash } from 'node:crypto'
import { isRedisService, type RedisAccess, type RedisPrefixes, redisAccess } from '@meridian/contracts'

/** The user provisioning and tools connect as: every key, channel and command. */
export const redisAdminUser = 'admin'

/**
 * What a service's user may run: every command but the dangerous ones (FLUSHALL, KEYS, CONFIG, DEBUG, CLIENT LIST and
 * KILL, SHUTDOWN…) except INFO (ioredis' ready check asks it on every connection: without it a connection is never
 * ready), and, of scripting, only EVAL and EVALSHA (ioredis runs its scripts with them): no SCRIPT FLUSH or KILL, no
 * FUNCTION. Inside a script every command is checked against the user's rules again.
 */
export const serviceCommandRules: readonly string[] = [
  '+@all',
  '-@dangerous',
  '+info',
  '-@scripting',
  '+eval',
  '+evalsha',
]

/** A key or channel pattern as the declaration gives it: nothing that could end the rule or start another. */
const patternShape = /^[A-Za-z0-9:._*-]{1,100}$/

function pattern(value: string): string {
  if (!patternShape.test(value)) throw new Error(`Redis ACL pattern '${value}' must match ${patternShape}`)
  return value
}

/**
 * The rules of a service's user after its password: its keys (read and write), the keys it only reads (`%R~`), its
 * channels, the commands; and a selector that lets it subscribe — only subscribe — to the channels it follows, so
 * that no service but their owner can announce on them (a forged revocation would sign a user out everywhere).
 */
export function redisAclRules(access: RedisAccess): string[] {
  const rules = [
    'resetkeys',
    ...access.keys.map((key) => `~${pattern(key)}`),
    ...access.readKeys.map((key) => `%R~${pattern(key)}`),
    'resetchannels',
    ...access.channels.map((channel) => `&${pattern(channel)}`),
    ...serviceCommandRules,
  ]
  if (access.subscribeChannels.length > 0) {
    const followed = access.subscribeChannels.map((channel) => `&${pattern(channel)}`)
    rules.push(`(${[...followed, '+subscribe'].join(' ')})`)
  }
  return rules
}

/** How a password stands in an aclfile: its SHA-256, so that the file holds no password. */
export const passwordHashRule = (password: string): string =>
  `#${createHash('sha256').update(password).digest('hex')}`

const userLine = (user: string, passwordRule: string, rules: readonly string[]): string =>
  `user ${user} on ${passwordRule} ${rules.join(' ')}`

export interface RedisAclOptions {
  /** a user's password rule: `#<sha256>` in a file, a placeholder in a printed template */
  passwordRule(user: string): string
  /** the services that get a user (each must be one of the declaration's) */
  services: readonly string[]
  prefixes?: Partial<RedisPrefixes>
}

/** The aclfile's lines: the default user off, the administrator, then one user per service. */
export function redisAclLines(options: RedisAclOptions): string[] {
  const access = redisAccess(options.prefixes)
  return [
    'user default off resetpass resetkeys resetchannels -@all',
    userLine(redisAdminUser, options.passwordRule(redisAdminUser), ['~*', '&*', '+@all']),
    ...options.services.map((service) => {
      if (!isRedisService(service)) throw new Error(`no Redis access is declared for '${service}'`)
      return userLine(service, options.passwordRule(service), redisAclRules(access[service]))
    }),
  ]
}

/** The user a replica logs in to its primary as (masteruser), where the servers replicate (the cluster's set). */
export const redisReplicationUser = 'replication'
/** The user the sentinels log in to the servers as (sentinel auth-user). */
export const redisSentinelUser = 'sentinel'

/**
 * The two users a replicated set adds to the aclfile: the replica's (PSYNC, REPLCONF, PING only) and the sentinels'
 * (what Redis' documentation lists for them: watching, announcing on their channels, promoting, reconfiguring),
 * neither with any key.
 */
export function redisReplicationAclLines(passwordRule: (user: string) => string): string[] {
  return [
    userLine(redisReplicationUser, passwordRule(redisReplicationUser), [
      '-@all',
      '+psync',
      '+replconf',
      '+ping',
    ]),
    userLine(redisSentinelUser, passwordRule(redisSentinelUser), [
      '&*',
      '-@all',
      '+multi',
      '+slaveof',
      '+ping',
      '+exec',
      '+subscribe',
      '+config|rewrite',
      '+role',
      '+publish',
      '+info',
      '+client|setname',
      '+client|kill',
      '+script|kill',
    ]),
  ]
}

/** The lines with placeholders for the passwords (`><service>-password`), as docs/how-to/deploying.md shows them. */
export function redisAclTemplate(services: readonly string[], prefixes?: Partial<RedisPrefixes>): string[] {
  return redisAclLines({
    passwordRule: (user) => `><${user}-password>`,
    services,
    ...(prefixes ? { prefixes } : {}),
  })
}

/**
 * Each service's rules as a managed offering's access string (ElastiCache's RBAC users): `on` and the rules without
 * the reset* ones, which such offerings refuse (the password is set apart from the rules), as `<user> <access string>`.
 */
export function redisAccessStrings(services: readonly string[], prefixes?: Partial<RedisPrefixes>): string[] {
  const access = redisAccess(prefixes)
  return services.map((service) => {
    if (!isRedisService(service)) throw new Error(`no Redis access is declared for '${service}'`)
    const rules = redisAclRules(access[service]).filter((rule) => !rule.startsWith('reset'))
    return `${service} on ${rules.join(' ')}`
  })
}
