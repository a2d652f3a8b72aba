// Redis for tests: a client whose keys carry the test file's own prefix, and the cleanup of those keys.
import { Redis } from 'ioredis'
import { infraEndpoints } from './endpoints.ts'
import { uniqueName } from './unique-name.ts'

export interface TestRedis {
  /** a client whose keys all carry this file's prefix */
  redis: Redis
  prefix: string
  /** deletes this file's keys and closes the client */
  cleanup(): Promise<void>
}

export function freshRedis(label = 'test'): TestRedis {
  const prefix = `${uniqueName(label)}:`
  const redis = new Redis(infraEndpoints().redisUrl, { keyPrefix: prefix, lazyConnect: false })
  return {
    redis,
    prefix,
    async cleanup() {
      const raw = new Redis(infraEndpoints().redisUrl)
      try {
        let cursor = '0'
        do {
          const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
          if (keys.length > 0) await raw.del(...keys)
          cursor = next
        } while (cursor !== '0')
      } finally {
        raw.disconnect()
        redis.disconnect()
      }
    },
  }
}
