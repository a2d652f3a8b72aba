// A rate-limit store for @fastify/rate-limit that counts locally and settles with Redis in batches.
//
// The plugin's own Redis store runs a script on every request: one Redis round trip, and a fifth of the CPU of a cheap
// endpoint. This store asks Redis only for the first request of a client in a window (so a client starts from the
// count every instance has seen), then counts in memory and adds its local increments to the shared Redis counter
// every `syncIntervalMs`, reading back the total. Several instances therefore agree within one sync interval: the
// limit can be overshot by at most the requests that reach the other instances during one interval. With
// `syncIntervalMs: 0` every request goes to Redis, and the count is exact.
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { Redis } from 'ioredis'

interface RateLimitResult {
  current: number
  ttl: number
}

type IncrCallback = (error: Error | null, result?: RateLimitResult) => void

/** What @fastify/rate-limit passes to a store's constructor and to child(). */
interface StoreParams {
  continueExceeding?: boolean
  exponentialBackoff?: boolean
  routeInfo?: { method: string; url: string }
}

interface Counter {
  /** requests counted here and not yet sent to Redis */
  pending: number
  /** increments sent to Redis whose answer has not come back */
  inFlight: number
  /** the shared count as Redis last told it (it includes what this instance added before) */
  shared: number
  /** when the window ends, in ms since the epoch */
  resetAt: number
  /** set while the window's first Redis call is in flight: requests arriving meanwhile wait for it */
  starting: Promise<void> | undefined
}

// INCRBY the local increments, start the window on a new key, and answer the total and the time left.
const settleScript = `
  local current = redis.call('INCRBY', KEYS[1], ARGV[1])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    ttl = tonumber(ARGV[2])
  end
  return {current, ttl}
`

interface SettleRedis extends Redis {
  meridianRateLimitSettle(key: string, increment: number, windowMs: number): Promise<[number, number]>
}

export interface SyncedRedisStoreOptions {
  redis: Redis
  /** prefix of every Redis key, e.g. `auth:rate-limit:` */
  keyPrefix: string
  /** how often local counts are added to Redis; 0: every request goes to Redis (exact across instances) */
  syncIntervalMs: number
  /** the window, when the plugin does not pass one */
  timeWindowMs: number
}

/**
 * A store class for @fastify/rate-limit's `store` option (the plugin instantiates it, and calls child() for routes
 * with limits of their own).
 */
export function syncedRedisStore(options: SyncedRedisStoreOptions): FastifyRateLimitStoreCtor {
  const redis = settlingRedis(options.redis)
  return class extends SyncedRedisStore {
    constructor(params: StoreParams) {
      super(redis, options, params, options.keyPrefix)
    }
  }
}

/** A key's count in its current window, as the synced store keeps it. */
export interface SyncedCount {
  /** actions counted in the window, on every instance as far as this one knows (this one included) */
  current: number
  /** ms until the window ends */
  ttl: number
}

/**
 * The same counting outside HTTP (a realtime connection's events, a user's chat messages): `incr` counts one action of
 * `key` and answers its count in the window, at once when the window is known here (usually), else once Redis has
 * answered (a key's first action of a window).
 */
export interface SyncedRedisCounter {
  incr(key: string, callback: (error: Error | null, count?: SyncedCount) => void): void
}

export function syncedRedisCounter(options: SyncedRedisStoreOptions): SyncedRedisCounter {
  return new SyncedRedisStore(settlingRedis(options.redis), options, {}, options.keyPrefix)
}

function settlingRedis(redis: Redis): SettleRedis {
  const settling = redis as SettleRedis
  if (typeof settling.meridianRateLimitSettle !== 'function') {
    settling.defineCommand('meridianRateLimitSettle', { numberOfKeys: 1, lua: settleScript })
  }
  return settling
}

class SyncedRedisStore implements FastifyRateLimitStore {
  private readonly counters = new Map<string, Counter>()
  private timer: NodeJS.Timeout | undefined
  private settling = false

  constructor(
    private readonly redis: SettleRedis,
    private readonly options: SyncedRedisStoreOptions,
    params: StoreParams,
    private readonly keyPrefix: string,
  ) {
    if (params.continueExceeding || params.exponentialBackoff)
      throw new Error('rate limit: continueExceeding and exponentialBackoff are not supported by this store')
  }

  incr(key: string, callback: IncrCallback, timeWindow = this.options.timeWindowMs): void {
    if (this.options.syncIntervalMs === 0) {
      this.redis.meridianRateLimitSettle(this.keyPrefix + key, 1, timeWindow).then(
        ([current, ttl]) => callback(null, { current: Number(current), ttl: Number(ttl) }),
        (error: Error) => callback(error),
      )
      return
    }
    const now = Date.now()
    let counter = this.counters.get(key)
    if (counter === undefined || counter.resetAt <= now) {
      const fresh: Counter = {
        pending: 1,
        inFlight: 0,
        shared: 0,
        resetAt: now + timeWindow,
        starting: undefined,
      }
      fresh.starting = this.settle(key, fresh, timeWindow).finally(() => {
        fresh.starting = undefined
      })
      this.counters.set(key, fresh)
      counter = fresh
    } else {
      counter.pending += 1
    }
    const known = counter
    if (known.starting) {
      // a client's first request of a window (and those arriving before Redis answered) start from the shared count
      known.starting.then(
        () => callback(null, this.result(known)),
        (error: Error) => callback(error),
      )
      return
    }
    this.scheduleSettle(timeWindow)
    callback(null, this.result(known))
  }

  child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
    // at run time the plugin passes the route's merged rate-limit options, routeInfo included
    const params = routeOptions as StoreParams
    const route = params.routeInfo
    return new SyncedRedisStore(
      this.redis,
      this.options,
      params,
      route ? `${this.keyPrefix}${route.method}${route.url}-` : this.keyPrefix,
    )
  }

  private result(counter: Counter): RateLimitResult {
    return {
      current: counter.shared + counter.inFlight + counter.pending,
      ttl: Math.max(0, counter.resetAt - Date.now()),
    }
  }

  /** Sends this counter's pending increments to Redis and takes the shared total and the window's end from it. */
  private async settle(key: string, counter: Counter, timeWindow: number): Promise<void> {
    const increment = counter.pending
    counter.pending = 0
    counter.inFlight += increment
    try {
      const [current, ttl] = await this.redis.meridianRateLimitSettle(
        this.keyPrefix + key,
        increment,
        timeWindow,
      )
      // answers may overtake each other; within a window the shared count only grows
      counter.shared = Math.max(counter.shared, Number(current))
      counter.resetAt = Date.now() + Number(ttl)
    } catch (error) {
      counter.pending += increment
      throw error
    } finally {
      counter.inFlight -= increment
    }
  }

  private scheduleSettle(timeWindow: number): void {
    if (this.timer !== undefined) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.settleAll(timeWindow)
    }, this.options.syncIntervalMs)
    this.timer.unref()
  }

  private async settleAll(timeWindow: number): Promise<void> {
    if (this.settling) return this.scheduleSettle(timeWindow)
    this.settling = true
    const now = Date.now()
    const work: Promise<void>[] = []
    for (const [key, counter] of this.counters) {
      if (counter.resetAt <= now) {
        this.counters.delete(key)
        continue
      }
      if (counter.pending === 0 || counter.starting) continue
      // with auto-pipelining these leave in one write
      work.push(this.settle(key, counter, timeWindow).catch(() => undefined))
    }
    await Promise.all(work)
    this.settling = false
    if ([...this.counters.values()].some((counter) => counter.pending > 0)) this.scheduleSettle(timeWindow)
  }
}
