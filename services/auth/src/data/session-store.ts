// Cookie sessions in Redis: `authNames.sessionKeyPrefix + id` -> the session record as JSON, expiring with the session
// (a fixed lifetime from the login: nothing extends it). A session ended by logout is announced on
// authNames.sessionEndedChannel, so that connections held with it (the realtime channel's) end too.
import { randomBytes } from 'node:crypto'
import { authNames, type SessionEnded, type SessionRecord } from '@meridian/contracts'
import { sessionIdHash } from '@meridian/service-kit'
import type { Redis } from 'ioredis'

// deleted and announced in one step, and announced only when there was a session to end (a logout without one, or a
// guessed cookie, tells no one anything)
const endScript = `
  if redis.call('DEL', KEYS[1]) == 1 then
    redis.call('PUBLISH', ARGV[1], ARGV[2])
    return 1
  end
  return 0
`

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

    /** Deletes the session and announces its end (by its id's hash); false when there was none. */
    async end(id: string): Promise<boolean> {
      const ended: SessionEnded = { sessionHash: sessionIdHash(id) }
      const deleted = await redis.eval(
        endScript,
        1,
        key(id),
        authNames.sessionEndedChannel,
        JSON.stringify(ended),
      )
      return deleted === 1
    },
  }
}

export type SessionStore = ReturnType<typeof createSessionStore>
