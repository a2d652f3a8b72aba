// The Redis client every service uses (rate limits, sessions, caches): one place for the options that matter.
import { Redis, type RedisOptions } from 'ioredis'

export interface ServiceRedisOptions {
  /** shown by CLIENT LIST, so an operator can tell which service holds a connection */
  connectionName: string
  /** prepended to every key (tests and benchmarks isolate their keys with it) */
  keyPrefix?: string
}

export function createRedis(url: string, options: ServiceRedisOptions): Redis {
  const redisOptions: RedisOptions = {
    connectionName: options.connectionName,
    // Commands issued in the same event-loop tick leave in one write: under load every request's rate-limit
    // script shares a syscall and a round trip with its neighbours' instead of paying for its own.
    enableAutoPipelining: true,
    // a request waiting on Redis fails fast (the rate limiter then lets it through) instead of queueing forever
    maxRetriesPerRequest: 2,
    ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}),
  }
  return new Redis(url, redisOptions)
}
