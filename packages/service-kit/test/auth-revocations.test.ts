// Credential revocations: a service following auth's revocations in Redis refuses what a user held before one.
import { randomUUID } from 'node:crypto'
import { authNames, type CredentialRevocation, type SessionEnded } from '@meridian/contracts'
import { eventually, expectErrorEnvelope, infraEndpoints } from '@meridian/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Principal, sessionIdHash } from '../src/auth/index.ts'
import { type AuthApp, bearer, buildAuthApp, claims, hsSecret, hsToken } from './auth-app.ts'

/** What auth does when it revokes: store the revocation and announce it (services/auth, credential-revocations). */
async function revoke(redis: Redis, userId: string, revokedBefore = Date.now()): Promise<void> {
  const revocation: CredentialRevocation = { userId, revokedBefore, until: revokedBefore + 60_000 }
  const text = JSON.stringify(revocation)
  await redis
    .multi()
    .set(`${authNames.revocationKeyPrefix}${userId}`, text, 'PX', 60_000)
    .publish(authNames.revocationChannel, text)
    .exec()
}

/**
 * Waits until `service` has heard a revocation of a user of its own announced after everything published so far:
 * pub/sub keeps the order of one connection's messages, so whatever came before is applied by then. What a test then
 * asserts holds because the announcement was pushed and applied on arrival, not because some time passed.
 */
async function heardEverythingBefore(redis: Redis, service: AuthApp): Promise<void> {
  const marker = randomUUID()
  await revoke(redis, marker)
  await eventually(
    'the service hears the marker revocation',
    () => service.app.credentialRevocations.revokedBefore(marker) > 0,
  )
}

describe('credential revocations followed by a service', () => {
  const redis = new Redis(infraEndpoints().redisUrl)
  let service: AuthApp
  const apiKeyAnswers: { key: string; at: number }[] = []
  const apiKeyOwner = randomUUID()

  beforeAll(async () => {
    service = await buildAuthApp({
      jwt: { algorithm: 'HS256', secret: hsSecret },
      sessions: { redis },
      revocations: { redis },
      // stands in for apiKeysFromAuth: remembers its answer until a revocation says it is stale
      apiKeys: {
        async verify(key, revokedBefore) {
          const remembered = apiKeyAnswers.find((answer) => answer.key === key)
          if (remembered && remembered.at >= revokedBefore(apiKeyOwner)) return principalOfKey()
          apiKeyAnswers.push({ key, at: Date.now() })
          // the owner was suspended: auth no longer knows the key as active
          return revokedBefore(apiKeyOwner) > 0 ? undefined : principalOfKey()
        },
      },
    })
  })
  afterAll(async () => {
    await service.app.close()
    redis.disconnect()
  })

  const principalOfKey = (): Principal => ({
    subject: apiKeyOwner,
    kind: 'user',
    role: 'admin',
    roles: [],
    scopes: [],
    method: 'api-key',
  })

  const me = (headers: Record<string, string>, cookies: Record<string, string> = {}) =>
    service.app.inject({ method: 'GET', url: '/me', headers, cookies })

  it('when a user is revoked, then their access token issued before is refused with 401 Invalid or expired token as the announcement arrives', async () => {
    const userId = randomUUID()
    const earlier = Math.floor(Date.now() / 1000) - 5
    const token = hsToken(claims({ sub: userId, iat: earlier }))
    expect((await me(bearer(token))).statusCode).toBe(200)

    await revoke(redis, userId)
    await heardEverythingBefore(redis, service)

    expect(expectErrorEnvelope(await me(bearer(token)), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid or expired token',
    )
  })

  it('when a user is revoked, then a token issued after the revocation (a new login) is accepted', async () => {
    const userId = randomUUID()
    await revoke(redis, userId, Date.now() - 10_000)
    await heardEverythingBefore(redis, service)
    expect(service.app.credentialRevocations.revokedBefore(userId)).toBeGreaterThan(0)
    const fresh = hsToken(claims({ sub: userId }))
    expect((await me(bearer(fresh))).statusCode).toBe(200)
  })

  it('when a user is revoked, then their cookie session created before is refused with 401 Invalid session', async () => {
    const userId = randomUUID()
    const sessionId = randomUUID()
    const record = { userId, role: 'admin', createdAt: new Date(Date.now() - 5000).toISOString() }
    await redis.set(`${authNames.sessionKeyPrefix}${sessionId}`, JSON.stringify(record), 'EX', 60)
    const cookies = { [authNames.sessionCookie]: sessionId }
    expect((await me({}, cookies)).statusCode).toBe(200)

    await revoke(redis, userId)
    await heardEverythingBefore(redis, service)

    expect(expectErrorEnvelope(await me({}, cookies), 401, 'UNAUTHORIZED').message).toBe('Invalid session')
  })

  it('when the owner of an API key is revoked, then a remembered answer about the key is not used: the key is asked about again and refused', async () => {
    const key = `mk_${randomUUID()}`
    expect((await me({ 'x-api-key': key })).statusCode).toBe(200)
    expect((await me({ 'x-api-key': key })).statusCode).toBe(200)
    const answers = apiKeyAnswers.filter((answer) => answer.key === key)
    expect(answers).toHaveLength(1)

    // revoked after the key was answered about: on a fast machine Date.now() can still read the answer's millisecond,
    // and an answer of the revocation's very moment counts as given after it (as a token issued then would)
    await revoke(redis, apiKeyOwner, answers[0]!.at + 1)
    await heardEverythingBefore(redis, service)

    expect(expectErrorEnvelope(await me({ 'x-api-key': key }), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid API key',
    )
  })

  it('when a revocation was stored before the service started, then the service applies it from its first request', async () => {
    const userId = randomUUID()
    await revoke(redis, userId)
    const later = await buildAuthApp({
      jwt: { algorithm: 'HS256', secret: hsSecret },
      revocations: { redis },
    })
    try {
      const token = hsToken(claims({ sub: userId, iat: Math.floor(Date.now() / 1000) - 5 }))
      const response = await later.app.inject({ method: 'GET', url: '/me', headers: bearer(token) })
      expect(expectErrorEnvelope(response, 401, 'UNAUTHORIZED').message).toBe('Invalid or expired token')
    } finally {
      await later.app.close()
    }
  })

  it('when a malformed revocation is announced, then it is ignored and nothing is revoked', async () => {
    const userId = randomUUID()
    const token = hsToken(claims({ sub: userId, iat: Math.floor(Date.now() / 1000) - 5 }))
    await redis.publish(authNames.revocationChannel, JSON.stringify({ userId, revokedBefore: 'soon' }))
    await redis.publish(authNames.revocationChannel, '{not json')
    await heardEverythingBefore(redis, service)
    expect((await me(bearer(token))).statusCode).toBe(200)
  })

  it('when revocations arrive, then onRevoked listeners hear each that moves a user later once (a repeat or an older one is not told again)', async () => {
    const userId = randomUUID()
    const heard: CredentialRevocation[] = []
    const stop = service.app.credentialRevocations.onRevoked((revocation) => {
      if (revocation.userId === userId) heard.push(revocation)
    })
    try {
      const first = Date.now() - 1000
      await revoke(redis, userId, first)
      await eventually('the first revocation is heard', () => heard.length === 1)
      // told again (auth delivers at least once), then an older one, then a later one
      await revoke(redis, userId, first)
      await revoke(redis, userId, first - 500)
      await revoke(redis, userId, first + 500)
      await heardEverythingBefore(redis, service)
      expect(heard.map((revocation) => revocation.revokedBefore)).toEqual([first, first + 500])
    } finally {
      stop()
    }
  })

  it('when auth announces a session ended, then onSessionEnded listeners hear its hash; a malformed announcement is ignored', async () => {
    const heard: SessionEnded[] = []
    const stop = service.app.credentialRevocations.onSessionEnded((ended) => heard.push(ended))
    try {
      const sessionHash = sessionIdHash(randomUUID())
      await redis.publish(authNames.sessionEndedChannel, JSON.stringify({ sessionId: 'the id itself' }))
      await redis.publish(authNames.sessionEndedChannel, '{not json')
      await redis.publish(authNames.sessionEndedChannel, JSON.stringify({ sessionHash }))
      // pub/sub keeps the order of one connection's messages: the malformed ones came first
      await eventually('the well-formed announcement is heard', () =>
        heard.some((ended) => ended.sessionHash === sessionHash),
      )
      expect(heard).toEqual([{ sessionHash }])
    } finally {
      stop()
    }
  })

  it('when a session id is hashed for an announcement, then it is the base64url SHA-256 of the id, never the id', () => {
    const hash = sessionIdHash('a-session-id')
    expect(hash).toBe('OEnrlkElMLL9x3JndKvre8K8v_f05hkaHHEhYj33Mmk')
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('when a revocation has lapsed (its until has passed), then it no longer applies', async () => {
    const userId = randomUUID()
    const text = JSON.stringify({ userId, revokedBefore: Date.now(), until: Date.now() - 1 })
    await redis.publish(authNames.revocationChannel, text)
    await heardEverythingBefore(redis, service)
    expect(service.app.credentialRevocations.revokedBefore(userId)).toBe(0)
  })
})
