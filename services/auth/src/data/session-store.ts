// Cookie sessions in Redis: `authNames.sessionKeyPrefix + id` -> the session record as JSON, expiring with the session
// (a fixed lifetime from the login: nothing extends it). A session ended by logout is announced on
// authNames.sessionEndedChannel, so that connections held with it (the realtime channel's) end too.
// Each user's sessions are indexed under `userSessionsKeyPrefix + user id` (a set of session ids, kept as long as the
// user's latest session), so that a change of what the records say (whether the address is verified) reaches every
// live session of the user; an id whose session expired is dropped from the set when next met.
import { randomBytes } from 'node:crypto'
import { authNames, type SessionEnded, type SessionRecord } from '@meridian/contracts'
import { sessionIdHash } from '@meridian/service-kit'
import type { Redis } from 'ioredis'

/** Redis key of a user's session index: prefix + user id -> set of session ids. */
export const userSessionsKeyPrefix = 'auth:user-sessions:'

// the record and its id in the user's index in one step; the index lives at least as long as the new session
const createScript = `
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('SADD', KEYS[2], ARGV[3])
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[2], ARGV[2])
  end
  return 1
`

// deleted, taken out of its user's index and announced in one step, and announced only when there was a session to
// end (a logout without one, or a guessed cookie, tells no one anything)
const endScript = `
  local stored = redis.call('GET', KEYS[1])
  if not stored then return 0 end
  redis.call('DEL', KEYS[1])
  local decoded, record = pcall(cjson.decode, stored)
  if decoded and type(record) == 'table' and type(record.userId) == 'string' then
    redis.call('SREM', ARGV[3] .. record.userId, ARGV[4])
  end
  redis.call('PUBLISH', ARGV[1], ARGV[2])
  return 1
`

// every live session of the user rewritten with emailVerified, each keeping its time left (KEEPTTL); the ids of
// sessions that expired or ended leave the index. Answers how many sessions were rewritten.
const setEmailVerifiedScript = `
  local rewritten = 0
  for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    local key = ARGV[1] .. id
    local stored = redis.call('GET', key)
    local decoded, record = false, nil
    if stored then decoded, record = pcall(cjson.decode, stored) end
    if decoded and type(record) == 'table' then
      record.emailVerified = ARGV[2] == 'true'
      redis.call('SET', key, cjson.encode(record), 'KEEPTTL')
      rewritten = rewritten + 1
    elseif not stored then
      redis.call('SREM', KEYS[1], id)
    end
  end
  return rewritten
`

export interface SessionReplication {
  /** replicas that must have the new session before create() resolves (Redis' WAIT); 0: no wait */
  replicas: number
  /** at most this long, ms: past it create() resolves anyway and `unreplicated` is told */
  timeoutMs: number
  /** told when fewer replicas than asked had the session in time (a replica down or behind) */
  unreplicated?: (acknowledged: number, asked: number) => void
}

export function createSessionStore(
  redis: Redis,
  replication: SessionReplication = { replicas: 0, timeoutMs: 0 },
) {
  const key = (id: string) => `${authNames.sessionKeyPrefix}${id}`
  const userKey = (userId: string) => `${userSessionsKeyPrefix}${userId}`
  return {
    /**
     * Stores the record under a new random id (32 bytes, base64url), indexed under its user; returns the id. With
     * replicas asked for, resolves once they have it (Redis replicates asynchronously: a session only the primary
     * held was lost with it, and its customer signed out, when the sentinels promoted a replica), or after the wait.
     */
    async create(record: SessionRecord, ttlSeconds: number): Promise<string> {
      const id = randomBytes(32).toString('base64url')
      await redis.eval(
        createScript,
        2,
        key(id),
        userKey(record.userId),
        JSON.stringify(record),
        ttlSeconds * 1000,
        id,
      )
      if (replication.replicas > 0) {
        const acknowledged = Number(
          await redis.call('WAIT', String(replication.replicas), String(replication.timeoutMs)),
        )
        if (acknowledged < replication.replicas)
          replication.unreplicated?.(acknowledged, replication.replicas)
      }
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
        userSessionsKeyPrefix,
        id,
      )
      return deleted === 1
    },

    /**
     * Rewrites every live session of the user to say `emailVerified`, each keeping its time left; how many were.
     * (Sessions are read on each request, so the next one sees it.)
     */
    async setEmailVerified(userId: string, emailVerified: boolean): Promise<number> {
      const rewritten = await redis.eval(
        setEmailVerifiedScript,
        1,
        userKey(userId),
        authNames.sessionKeyPrefix,
        String(emailVerified),
      )
      return Number(rewritten)
    },
  }
}

export type SessionStore = ReturnType<typeof createSessionStore>
