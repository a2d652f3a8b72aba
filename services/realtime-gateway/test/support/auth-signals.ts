// What auth does that the channel follows, done in Redis exactly as auth does it (services/auth: the revocations store,
// the session store): a user's credentials revoked, a cookie session started, a session logged out.
import { randomBytes } from 'node:crypto'
import {
  authNames,
  type CredentialRevocation,
  type SessionEnded,
  type SessionRecord,
} from '@meridian/contracts'
import { sessionIdHash } from '@meridian/service-kit'
import { eventually } from '@meridian/testkit'
import type { Redis } from 'ioredis'
import { allowedOrigin } from './realtime.ts'

/** Auth's revocation of everything the user held before `revokedBefore`: stored, then announced. */
export async function revokeUser(redis: Redis, userId: string, revokedBefore = Date.now()): Promise<void> {
  const revocation: CredentialRevocation = { userId, revokedBefore, until: revokedBefore + 120_000 }
  const text = JSON.stringify(revocation)
  await redis
    .multi()
    .set(`${authNames.revocationKeyPrefix}${userId}`, text, 'PX', 120_000)
    .publish(authNames.revocationChannel, text)
    .exec()
}

/** What follows auth's announcements in an instance: the chassis's revocations, fed by Redis pub/sub. */
interface Following {
  app: { credentialRevocations: { revokedBefore(userId: string): number } }
}

/**
 * Waits until every instance has heard a revocation (of a user of its own) announced after everything `redis` has
 * published so far: a subscriber gets one connection's messages in the order they were published, so each earlier
 * announcement has been acted on by then. What a test asserts next holds because announcements are pushed and acted
 * on as they arrive, not because some time has passed.
 */
export async function heardByAll(redis: Redis, instances: readonly Following[]): Promise<void> {
  const marker = randomBytes(16).toString('hex')
  await revokeUser(redis, marker)
  await eventually('every instance hears the marker revocation', () =>
    instances.every((instance) => instance.app.credentialRevocations.revokedBefore(marker) > 0),
  )
}

/** A cookie session of the user as auth's login stores it; its id (the cookie's value). */
export async function startSession(
  redis: Redis,
  userId: string,
  { ttlMs = 600_000, createdAt = new Date() }: { ttlMs?: number; createdAt?: Date } = {},
): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url')
  const record: SessionRecord = { userId, role: 'user', createdAt: createdAt.toISOString() }
  await redis.set(`${authNames.sessionKeyPrefix}${sessionId}`, JSON.stringify(record), 'PX', ttlMs)
  return sessionId
}

/** Auth's logout: the session deleted, its end announced by its id's hash. */
export async function logOut(redis: Redis, sessionId: string): Promise<void> {
  const ended: SessionEnded = { sessionHash: sessionIdHash(sessionId) }
  await redis
    .multi()
    .del(`${authNames.sessionKeyPrefix}${sessionId}`)
    .publish(authNames.sessionEndedChannel, JSON.stringify(ended))
    .exec()
}

/** The upgrade's headers of a browser holding the session (an allowed Origin, the session cookie). */
export const sessionHeaders = (sessionId: string) => ({
  origin: allowedOrigin,
  cookie: `${authNames.sessionCookie}=${sessionId}`,
})
