// Who is present in each chat room, in Redis so that every instance of the channel sees the same: per room, the
// present users (id -> name) and each one's live socket count; and one sorted set of departures, a user whose last
// socket left a room, due to leave it when the offline grace ends. Every change is one Lua script (atomic), so a
// departure is claimed by exactly one instance however many sweep at once.
import type { Redis } from 'ioredis'

export interface PresenceStoreOptions {
  redis: Redis
  /** REALTIME_REDIS_PREFIX: instances of one channel share it */
  prefix: string
  /** REALTIME_OFFLINE_GRACE_MS: how long a user whose last socket left stays present */
  graceMs: number
}

export interface PresentUser {
  roomId: string
  userId: string
  username: string
}

/** Redis's own clock, in ms: every instance compares deadlines with the same clock. */
const redisNow = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`

// KEYS: online, sockets, departures; ARGV: userId, username, departure member. Returns 1 when they were present.
const arriveScript = `
local present = redis.call('HEXISTS', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('ZREM', KEYS[3], ARGV[3])
return present`

// KEYS: sockets, departures; ARGV: userId, departure member, graceMs. Returns the deadline (ms) when it was the
// user's last socket in the room, else 0.
const departScript = `
local count = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if count <= 0 then return 0 end
if count > 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
${redisNow}
local deadline = now + tonumber(ARGV[3])
redis.call('ZADD', KEYS[2], deadline, ARGV[2])
return deadline`

// KEYS: departures; ARGV: key prefix, batch size. Claims the due departures (ZREM) and drops each user from the
// room's present ones unless a socket of theirs came back; returns how many were due, then room, user, name triples
// of those who left.
const sweepScript = `
${redisNow}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local left = { #due }
for _, member in ipairs(due) do
  redis.call('ZREM', KEYS[1], member)
  local at = string.find(member, '|', 1, true)
  local room = string.sub(member, 1, at - 1)
  local user = string.sub(member, at + 1)
  local sockets = tonumber(redis.call('HGET', ARGV[1] .. 'chat:sockets:' .. room, user) or '0')
  if sockets <= 0 then
    local online = ARGV[1] .. 'chat:online:' .. room
    local name = redis.call('HGET', online, user)
    if name then
      redis.call('HDEL', online, user)
      table.insert(left, room)
      table.insert(left, user)
      table.insert(left, name)
    end
  end
end
return left`

const sweepBatch = 500

export function createPresenceStore({ redis, prefix, graceMs }: PresenceStoreOptions) {
  const onlineKey = (roomId: string) => `${prefix}chat:online:${roomId}`
  const socketsKey = (roomId: string) => `${prefix}chat:sockets:${roomId}`
  const departuresKey = `${prefix}chat:departures`
  // room ids are uuids: '|' never occurs in one
  const departure = (roomId: string, userId: string) => `${roomId}|${userId}`

  return {
    graceMs,

    /**
     * A socket of the user joined the room: counted, and any pending departure cancelled. `wasPresent` is true when
     * the user was present already (another socket, or back within the grace): then nobody is told they joined.
     */
    async arrive(user: PresentUser): Promise<{ wasPresent: boolean }> {
      const { roomId, userId, username } = user
      const present = await redis.eval(
        arriveScript,
        3,
        onlineKey(roomId),
        socketsKey(roomId),
        departuresKey,
        userId,
        username,
        departure(roomId, userId),
      )
      return { wasPresent: present === 1 }
    },

    /**
     * A socket of the user left the room (chat:leave or disconnect). When it was their last one, their departure is
     * due at the returned deadline (epoch ms, Redis's clock); they stay present until a sweep after it.
     */
    async depart(roomId: string, userId: string): Promise<{ lastSocket: boolean; deadline?: number }> {
      const deadline = Number(
        await redis.eval(
          departScript,
          2,
          socketsKey(roomId),
          departuresKey,
          userId,
          departure(roomId, userId),
          graceMs,
        ),
      )
      return deadline > 0 ? { lastSocket: true, deadline } : { lastSocket: false }
    },

    /** Claims every due departure: the users who left, each returned to exactly one caller across instances. */
    async sweep(): Promise<PresentUser[]> {
      const left: PresentUser[] = []
      for (;;) {
        const [due, ...triples] = (await redis.eval(sweepScript, 1, departuresKey, prefix, sweepBatch)) as [
          number,
          ...string[],
        ]
        for (let at = 0; at + 2 < triples.length; at += 3) {
          left.push({
            roomId: triples[at] as string,
            userId: triples[at + 1] as string,
            username: triples[at + 2] as string,
          })
        }
        // a full batch may have left more due behind it
        if (due < sweepBatch) return left
      }
    },

    /** The users present in the room (connected, or within their grace). */
    async online(roomId: string): Promise<PresentUser[]> {
      const users = await redis.hgetall(onlineKey(roomId))
      return Object.entries(users).map(([userId, username]) => ({ roomId, userId, username }))
    },
  }
}

export type PresenceStore = ReturnType<typeof createPresenceStore>
