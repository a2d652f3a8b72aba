// What each service may touch in Redis: the keys it writes, those of another service it only reads, the pub/sub
// channels it uses and those it only listens to. The one declaration the secure Redis' users are made from (one ACL
// user per service, infra/src/secure/redis-acl.ts, docs/how-to/deploying.md) and the services' key names come from, so that
// a key a service starts to use outside it is refused by the engine (NOPERM) in the tests that run on a secure Redis.
import { authNames } from './auth.ts'

/** The services that connect to Redis, each as its own user: the user's name is the service's. */
export const redisServices = [
  'gateway',
  'auth',
  'order',
  'payment',
  'inventory',
  'shipping',
  'notification',
  'realtime-gateway',
  'content',
] as const
export type RedisService = (typeof redisServices)[number]

/**
 * The prefixes a deployment chooses: REALTIME_REDIS_PREFIX (realtime-gateway's keys, its Socket.IO adapter's stream and
 * channels) and CONTENT_PUBSUB_PREFIX (the channels of content's GraphQL subscriptions).
 */
export interface RedisPrefixes {
  realtime: string
  contentPubsub: string
}

/** The prefixes' defaults (the services' configuration takes them from here). */
export const redisPrefixDefaults = {
  realtime: 'meridian:realtime:',
  contentPubsub: 'meridian:content:',
} as const satisfies RedisPrefixes

/** What a configurable prefix may hold: no white space, no glob characters (it becomes an ACL pattern). */
export const redisPrefixPattern = '^[A-Za-z0-9:._-]{1,64}$'

/** Where the chassis counts a service's rate limits (its global limit and its routes' own). */
export const rateLimitKeyPrefix = (service: string): string => `${service}:rate-limit:`

/** Patterns are Redis globs, as ACL rules take them (`~auth:*`, `&auth:credential-revocations`). */
export interface RedisAccess {
  /** keys it reads and writes */
  keys: readonly string[]
  /** keys it only reads: another service's records it follows */
  readKeys: readonly string[]
  /** channels it publishes and subscribes on */
  channels: readonly string[]
  /** channels it only subscribes to: another service's announcements, on which it may not publish */
  subscribeChannels: readonly string[]
}

/** A service's own keys: everything under its name (rate limits, the gateway's audit stream, auth's throttles…). */
const ownKeys = (service: RedisService): string => `${service}:*`

/** What every service's authentication follows of auth's: its credential revocations, and their announcements. */
const followsRevocations = {
  readKeys: [`${authNames.revocationKeyPrefix}*`],
  subscribeChannels: [authNames.revocationChannel, authNames.sessionEndedChannel],
} as const

/** …and its cookie sessions, read on each request that carries one (every service behind the gateway). */
const followsSessions = {
  readKeys: [`${authNames.sessionKeyPrefix}*`, ...followsRevocations.readKeys],
  subscribeChannels: followsRevocations.subscribeChannels,
} as const

/** A service whose Redis is the chassis' alone: its rate limits, and auth's sessions and revocations followed. */
const chassisOnly = (service: RedisService): RedisAccess => ({
  keys: [ownKeys(service)],
  channels: [],
  ...followsSessions,
})

/**
 * The prefixes a deployment configured, when they are ones: patterns without glob characters, apart from each other
 * and from every other service's keys (a realtime prefix of `auth:` would hand auth's keys to realtime-gateway).
 */
function checkedPrefixes(prefixes: Partial<RedisPrefixes>): RedisPrefixes {
  const chosen = { ...redisPrefixDefaults, ...prefixes }
  const owners = [
    { variable: 'REALTIME_REDIS_PREFIX', prefix: chosen.realtime, owner: 'realtime-gateway' },
    { variable: 'CONTENT_PUBSUB_PREFIX', prefix: chosen.contentPubsub, owner: 'content' },
  ] as const
  for (const { variable, prefix } of owners) {
    if (!new RegExp(redisPrefixPattern).test(prefix)) {
      throw new Error(`${variable} '${prefix}' must match ${redisPrefixPattern}`)
    }
  }
  for (const { variable, prefix, owner } of owners) {
    const others = [
      authNames.sessionKeyPrefix,
      ...redisServices.filter((service) => service !== owner).map((service) => `${service}:`),
      ...owners.filter((other) => other.owner !== owner).map((other) => other.prefix),
    ]
    const reached = others.find((other) => prefix.startsWith(other) || other.startsWith(prefix))
    if (reached !== undefined) {
      throw new Error(
        `${variable} '${prefix}' would reach names under '${reached}', which are not ${owner}'s`,
      )
    }
  }
  return chosen
}

/** Each service's access, for these prefixes (the defaults when not given). */
export function redisAccess(
  prefixes: Partial<RedisPrefixes> = {},
): Readonly<Record<RedisService, RedisAccess>> {
  const { realtime, contentPubsub } = checkedPrefixes(prefixes)
  return {
    // edge rate limits and the audit stream (gateway:audit); no cookie sessions (the services behind read them)
    gateway: { keys: [ownKeys('gateway')], channels: [], ...followsRevocations },
    // writes the sessions and the revocations, and announces both (inside its scripts); follows them as everyone does
    auth: {
      keys: [ownKeys('auth'), `${authNames.sessionKeyPrefix}*`],
      readKeys: [],
      channels: [authNames.revocationChannel, authNames.sessionEndedChannel],
      subscribeChannels: [],
    },
    order: chassisOnly('order'),
    payment: chassisOnly('payment'),
    inventory: chassisOnly('inventory'),
    shipping: chassisOnly('shipping'),
    notification: chassisOnly('notification'),
    // presence, connection limits, users' rates, the Socket.IO adapter's stream, recovery sessions and channels
    'realtime-gateway': {
      ...chassisOnly('realtime-gateway'),
      keys: [ownKeys('realtime-gateway'), `${realtime}*`],
      channels: [`${realtime}*`],
    },
    // postCreated between instances (mqemitter-redis: PUBLISH and SUBSCRIBE on `<prefix>post.created`)
    content: { ...chassisOnly('content'), channels: [`${contentPubsub}*`] },
  }
}

export const isRedisService = (name: string): name is RedisService =>
  (redisServices as readonly string[]).includes(name)
