// Credential revocations in Redis: stored for the services that start later, announced to those already running.
import { authNames, type CredentialRevocation } from '@meridian/contracts'
import type { Redis } from 'ioredis'

/**
 * Stores the revocation unless the user's stored one is newer, then announces it; one script, so both happen or
 * neither. A revocation is delivered at least once and possibly late (after a newer one of the same user): an older
 * one must never replace a newer one. Followers keep the newest they hear of, so announcing it again is harmless.
 * KEYS[1] the user's key; ARGV: the record as JSON, its revokedBefore, its time to live (ms), the channel.
 */
const publishScript = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and type(decoded) == 'table' and tonumber(decoded.revokedBefore) and
     tonumber(decoded.revokedBefore) > tonumber(ARGV[2]) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1`

export function createCredentialRevocationsStore(redis: Redis, now: () => number = Date.now) {
  return {
    /**
     * Stores the revocation until it lapses and announces it, in one round trip; false when a newer revocation of
     * the user was already stored (this one changes nothing) or this one has lapsed.
     */
    async publish(revocation: CredentialRevocation): Promise<boolean> {
      const ttlMs = revocation.until - now()
      if (ttlMs <= 0) return false
      const record: CredentialRevocation = {
        userId: revocation.userId,
        revokedBefore: revocation.revokedBefore,
        until: revocation.until,
      }
      const stored = await redis.eval(
        publishScript,
        1,
        `${authNames.revocationKeyPrefix}${revocation.userId}`,
        JSON.stringify(record),
        String(revocation.revokedBefore),
        String(ttlMs),
        authNames.revocationChannel,
      )
      return stored === 1
    },
  }
}

export type CredentialRevocationsStore = ReturnType<typeof createCredentialRevocationsStore>
