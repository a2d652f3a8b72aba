// A user's actions per fixed window, counted across instances in Redis (the chassis' synced counter: counted here,
// settled with Redis every `syncIntervalMs`, so the instances agree within that interval): their client events, and
// the chat messages they store.
import { type SyncedCount, syncedRedisCounter } from '@meridian/service-kit'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'

/** Allowed, or refused until the window ends. */
export type Taken = { allowed: true } | { allowed: false; retryAfterSeconds: number }

export interface UserRate {
  /**
   * Counts one action of the user: allowed while the window's count is within the limit. At once when this instance
   * knows the window (a promise only for a user's first action of a window, while Redis is asked).
   */
  take(userId: string): Taken | Promise<Taken>
}

export interface UserRateOptions {
  redis: Redis
  /** REALTIME_REDIS_PREFIX plus what is counted, e.g. `meridian:realtime:events:` */
  keyPrefix: string
  limit: number
  windowMs: number
  syncIntervalMs: number
  log: FastifyBaseLogger
}

const allowed: Taken = Object.freeze({ allowed: true })

export function createUserRate({
  redis,
  keyPrefix,
  limit,
  windowMs,
  syncIntervalMs,
  log,
}: UserRateOptions): UserRate {
  const counter = syncedRedisCounter({ redis, keyPrefix, syncIntervalMs, timeWindowMs: windowMs })
  let warnedAt = 0

  function verdict(error: Error | null, count: SyncedCount | undefined): Taken {
    if (error || !count) {
      // Redis unavailable: counted here only meanwhile (the connection's own rate still holds), said once a minute
      if (Date.now() - warnedAt > 60_000) {
        warnedAt = Date.now()
        log.warn(
          { err: error },
          'user rates: Redis unavailable; events are let through by this limit meanwhile',
        )
      }
      return allowed
    }
    if (count.current <= limit) return allowed
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(count.ttl / 1000)) }
  }

  return {
    take(userId) {
      let answered: Taken | undefined
      let resolve: ((taken: Taken) => void) | undefined
      counter.incr(userId.toLowerCase(), (error, count) => {
        const taken = verdict(error, count)
        if (resolve) resolve(taken)
        else answered = taken
      })
      if (answered) return answered
      return new Promise<Taken>((settle) => {
        resolve = settle
      })
    },
  }
}
