// Cookie sessions in Redis: `authNames.sessionKeyPrefix + id` -> the session record as JSON, expiring with the session.
import { randomBytes } from 'node:crypto'
import { authNames, type SessionRecord } from '@meridian/contracts'
import type { Redis } from 'ioredis'

export function createSessionStore(redis: Redis) {
  const key = (id: string) => `${authNames.sessionKeyPrefix}${id}`
  return {
    /** Stores the record under a new random id (32 bytes, base64url) and returns the id. */
    async create(record: SessionRecord, ttlSeconds: number): Promise<string> {
      const id = randomBytes(32).toString('base64url')
      await redis.set(key(id), JSON.stringify(record), 'EX', ttlSeconds)
      return id
    },

    async find(id: string): Promise<SessionRecord | undefined> {
      const value = await redis.get(key(id))
      return value ? (JSON.parse(value) as SessionRecord) : undefined
    },

    async delete(id: string): Promise<void> {
      await redis.del(key(id))
    },
  }
}

export type SessionStore = ReturnType<typeof createSessionStore>
