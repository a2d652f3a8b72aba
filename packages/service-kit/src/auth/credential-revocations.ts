// Every current credential revocation (auth's CredentialRevocation records in Redis) held in memory and kept up to
// date by pub/sub, so that checking a request against them costs a map lookup, not a Redis round trip; and the cookie
// sessions auth ends (logout), told to whoever holds connections of them as they are announced.
import { createHash } from 'node:crypto'
import { authNames, CredentialRevocation, SessionEnded } from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import type { Static, TSchema } from 'typebox'
import { Value } from 'typebox/value'

export interface CredentialRevocations {
  /** ms since the epoch before which the user's credentials no longer count; 0 when none is in force */
  revokedBefore(userId: string): number
  /** takes a revocation into account at once (auth, for the one it just wrote; pub/sub brings it to the others) */
  apply(revocation: CredentialRevocation): void
  /**
   * Calls `listener` with each revocation that moves a user's `revokedBefore` later, as it arrives: announced, applied,
   * or found by the reload after a lost subscription. For holders of long connections, which were admitted before it
   * (a request is checked as it comes). Returns the function that stops listening.
   */
  onRevoked(listener: (revocation: CredentialRevocation) => void): () => void
  /**
   * Calls `listener` with each cookie session auth announces as ended (logout), named by sessionIdHash. An end
   * announced while the subscription was lost is not told again: the session's record is gone, so the next check of
   * it (a request, or a connection's check at the session's end) refuses it. Returns the function that stops listening.
   */
  onSessionEnded(listener: (ended: SessionEnded) => void): () => void
  close(): Promise<void>
}

/** How a session is named where its id must not travel (SessionEnded): SHA-256 of the id, base64url. */
export const sessionIdHash = (sessionId: string): string =>
  createHash('sha256').update(sessionId).digest('base64url')

export interface FollowRevocationsOptions {
  redis: Redis
  logger: FastifyBaseLogger
  now?: () => number
}

function parsed<Schema extends TSchema>(schema: Schema, text: string | null): Static<Schema> | undefined {
  if (text === null) return undefined
  try {
    const value: unknown = JSON.parse(text)
    return Value.Check(schema, value) ? value : undefined
  } catch {
    return undefined
  }
}

const parseRevocation = (text: string | null) => parsed(CredentialRevocation, text)

/** Calls each listener; one that throws is logged and does not keep the others from hearing it. */
function tell<Message>(
  listeners: Set<(message: Message) => void>,
  message: Message,
  logger: FastifyBaseLogger,
): void {
  for (const listener of listeners) {
    try {
      listener(message)
    } catch (error) {
      logger.error({ err: error }, 'credential revocations: a listener failed')
    }
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
  const revokedListeners = new Set<(revocation: CredentialRevocation) => void>()
  const endedListeners = new Set<(ended: SessionEnded) => void>()

  function apply(revocation: CredentialRevocation): void {
    const current = known.get(revocation.userId)
    // a revocation told twice (auth delivers at least once), an older one or a lapsed one changes nothing
    if (current && current.revokedBefore >= revocation.revokedBefore) return
    if (revocation.until <= now()) return
    known.set(revocation.userId, revocation)
    tell(revokedListeners, revocation, logger)
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
  subscriber.on('message', (channel: string, text: string) => {
    if (channel === authNames.sessionEndedChannel) {
      const ended = parsed(SessionEnded, text)
      if (ended) tell(endedListeners, ended, logger)
      else logger.warn('malformed session end announced; ignored')
      return
    }
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
  await subscriber.subscribe(authNames.revocationChannel, authNames.sessionEndedChannel)
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
    onRevoked(listener) {
      revokedListeners.add(listener)
      return () => revokedListeners.delete(listener)
    },
    onSessionEnded(listener) {
      endedListeners.add(listener)
      return () => endedListeners.delete(listener)
    },
    async close() {
      revokedListeners.clear()
      endedListeners.clear()
      subscriber.disconnect()
    },
  }
}
