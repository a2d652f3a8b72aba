// The channel's connection limits per client address, counted in Redis so that every instance sees the same figures
// (spec: Limits — connection attempts per window, concurrent connections per address). Each check is one Lua script:
// atomic across instances, one round trip.
import type { Redis } from 'ioredis'

export interface ConnectionLimitsOptions {
  redis: Redis
  /** REALTIME_REDIS_PREFIX */
  prefix: string
  attempts: number
  attemptsWindowMs: number
  maxConnections: number
  /**
   * How long a held slot lives without renewal: an instance that dies without releasing its slots frees them after
   * this long. Renewed at a third of it while the connection lives.
   */
  leaseMs?: number
}

export interface ConnectionLimits {
  /** Counts one attempt of `address`; false when it is over its attempts in the current window. */
  attempt(address: string): Promise<boolean>
  /** Holds one of `address`'s concurrent slots for `connectionId`; false when all are held. */
  acquire(address: string, connectionId: string): Promise<boolean>
  release(address: string, connectionId: string): Promise<void>
  /** stops renewing (the slots of this instance expire with their lease, or were released) */
  close(): void
}

// KEYS[1] counter; ARGV[1] window ms. Fixed window: the first attempt starts it.
const attemptScript = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`

// KEYS[1] the address's slots (sorted set: member = connection id, score = lease end); ARGV: now, lease ms, max, id.
const acquireScript = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[4]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`

const defaultLeaseMs = 60_000

export function createConnectionLimits(options: ConnectionLimitsOptions): ConnectionLimits {
  const { redis, prefix, leaseMs = defaultLeaseMs } = options
  const attemptsKey = (address: string) => `${prefix}attempts:${address}`
  const slotsKey = (address: string) => `${prefix}connections:${address}`
  /** this instance's slots, renewed while held: connection id -> address */
  const held = new Map<string, string>()

  const renew = setInterval(() => {
    if (held.size === 0) return
    const leaseEnd = Date.now() + leaseMs
    const pipeline = redis.pipeline()
    for (const [connectionId, address] of held) {
      pipeline.zadd(slotsKey(address), 'XX', leaseEnd, connectionId)
      pipeline.pexpire(slotsKey(address), leaseMs)
    }
    // a failed renewal is retried next round; the lease is three rounds long
    pipeline.exec().catch(() => {})
  }, leaseMs / 3)
  renew.unref()

  return {
    async attempt(address) {
      const count = Number(await redis.eval(attemptScript, 1, attemptsKey(address), options.attemptsWindowMs))
      return count <= options.attempts
    },
    async acquire(address, connectionId) {
      const granted = Number(
        await redis.eval(
          acquireScript,
          1,
          slotsKey(address),
          Date.now(),
          leaseMs,
          options.maxConnections,
          connectionId,
        ),
      )
      if (granted === 1) held.set(connectionId, address)
      return granted === 1
    },
    async release(address, connectionId) {
      held.delete(connectionId)
      await redis.zrem(slotsKey(address), connectionId)
    },
    close() {
      clearInterval(renew)
    },
  }
}
