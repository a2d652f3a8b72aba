// Credential revocations in Redis: stored for the services that start later, announced to those already running.
import { authNames, type CredentialRevocation } from '@meridian/contracts'
import type { Redis } from 'ioredis'

export function createCredentialRevocationsStore(redis: Redis) {
  return {
    /** Stores the revocation until it lapses and announces it, in one round trip (MULTI). */
    async publish(revocation: CredentialRevocation): Promise<void> {
      const text = JSON.stringify(revocation)
      const ttlMs = Math.max(1, revocation.until - Date.now())
      const results = await redis
        .multi()
        .set(`${authNames.revocationKeyPrefix}${revocation.userId}`, text, 'PX', ttlMs)
        .publish(authNames.revocationChannel, text)
        .exec()
      const failed = results?.find(([error]) => error !== null)?.[0]
      if (failed) throw failed
    },
  }
}

export type CredentialRevocationsStore = ReturnType<typeof createCredentialRevocationsStore>
