// Failed-login counters in Redis: fixed windows that start with the first failure and expire on their own.
import type { Redis } from 'ioredis'

export function createLoginFailureCounters(redis: Redis, windowSeconds: number) {
  return {
    /** Current count and seconds until each counter's window ends (0 when none). */
    async read(keys: string[]): Promise<{ count: number; secondsLeft: number }[]> {
      const pipeline = redis.multi()
      for (const key of keys) pipeline.get(key).ttl(key)
      const results = (await pipeline.exec()) ?? []
      return keys.map((_, i) => ({
        count: Number(results[2 * i]?.[1] ?? 0),
        secondsLeft: Math.max(0, Number(results[2 * i + 1]?.[1] ?? 0)),
      }))
    },

    async increment(keys: string[]): Promise<void> {
      const pipeline = redis.multi()
      // the window is set once, by the first failure; INCR keeps it
      for (const key of keys) pipeline.set(key, 0, 'EX', windowSeconds, 'NX').incr(key)
      await pipeline.exec()
    },

    async reset(key: string): Promise<void> {
      await redis.del(key)
    },
  }
}

export type LoginFailureCounters = ReturnType<typeof createLoginFailureCounters>
