// Every current credential revocation (auth's CredentialRevocation records in Redis) held in memory and kept up to
// date by pub/sub, so that checking a request against them costs a map lookup, not a Redis round trip.
import { authNames, CredentialRevocation } from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { Value } from 'typebox/value'

export interface CredentialRevocations {
  /** ms since the epoch before which the user's credentials no longer count; 0 when none is in force */
  revokedBefore(userId: string): number
  /** takes a revocation into account at once (auth, for the one it just wrote; pub/sub brings it to the others) */
  apply(revocation: CredentialRevocation): void
  close(): Promise<void>
}

export interface FollowRevocationsOptions {
  redis: Redis
  logger: FastifyBaseLogger
  now?: () => number
}

function parseRevocation(text: string | null): CredentialRevocation | undefined {
  if (text === null) return undefined
  try {
    const parsed: unknown = JSON.parse(text)
    return Value.Check(CredentialRevocation, parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * Subscribes to auth's revocation channel (on a connection of its own: a subscribed connection can do nothing else),
 * then loads every stored revocation. Each reconnection loads them again, so one announced while the connection was
 * down is not missed; until then the revocations already known keep applying.
 */
export async function followCredentialRevocations(
  options: FollowRevocationsOptions,
): Promise<CredentialRevocations> {
  const { redis, logger } = options
  const now = options.now ?? Date.now
  const known = new Map<string, CredentialRevocation>()

  function apply(revocation: CredentialRevocation): void {
    const current = known.get(revocation.userId)
    if (!current || current.revokedBefore < revocation.revokedBefore) known.set(revocation.userId, revocation)
  }

  async function loadStored(): Promise<void> {
    let cursor = '0'
    do {
      const [next, keys] = await redis.scan(
        cursor,
        'MATCH',
        `${authNames.revocationKeyPrefix}*`,
        'COUNT',
        500,
      )
      cursor = next
      if (keys.length === 0) continue
      for (const text of await redis.mget(...keys)) {
        const revocation = parseRevocation(text)
        if (revocation) apply(revocation)
      }
    } while (cursor !== '0')
  }

  const subscriber = redis.duplicate({ connectionName: 'credential-revocations' })
  subscriber.on('message', (_channel: string, text: string) => {
    const revocation = parseRevocation(text)
    if (revocation) apply(revocation)
    else logger.warn('malformed credential revocation announced; ignored')
  })
  subscriber.on('error', (error: unknown) =>
    logger.warn({ err: error }, 'credential revocations: Redis error'),
  )
  let first = true
  subscriber.on('ready', () => {
    // the first load is awaited below; later ones follow reconnections (ioredis resubscribes by itself)
    if (first) return
    loadStored().catch((error: unknown) =>
      logger.warn({ err: error }, 'credential revocations: reloading after a reconnection failed'),
    )
  })
  await subscriber.subscribe(authNames.revocationChannel)
  first = false
  await loadStored()

  return {
    revokedBefore(userId) {
      const revocation = known.get(userId)
      if (revocation === undefined) return 0
      if (revocation.until <= now()) {
        known.delete(userId)
        return 0
      }
      return revocation.revokedBefore
    },
    apply,
    async close() {
      subscriber.disconnect()
    },
  }
}
