// Sessions, API keys, the order of credentials, role and ownership checks, and API keys kept out of URLs and logs.
import { authNames } from '@meridian/contracts'
import { expectErrorEnvelope, freshRedis, type TestRedis } from '@meridian/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasApiKeyInQuery } from '../src/auth/auth-plugin.ts'
import type { Principal } from '../src/auth/index.ts'
import { maskSecretsInUrl } from '../src/logging.ts'
import { type AuthApp, bearer, buildAuthApp, claims, hsSecret, hsToken } from './auth-app.ts'

const apiKeys: Record<string, Principal> = {
  'mk_live_valid-key': {
    subject: 'user-7',
    kind: 'user',
    role: 'user',
    roles: [],
    scopes: ['orders:read'],
    method: 'api-key',
    apiKeyId: 'key-7',
  },
}

const sessionCookie = (id: string) => ({ cookie: `${authNames.sessionCookie}=${id}` })
const sessionCreatedAt = new Date(Date.now() - 60_000).toISOString()

describe('auth: sessions, API keys and authorization', () => {
  let store: TestRedis
  let auth: AuthApp

  beforeAll(async () => {
    // freshRedis prefixes every key of its client; the plugin uses the same client, so sessionKeyPrefix sits under it
    store = freshRedis('auth-sessions')
    auth = await buildAuthApp({
      jwt: { algorithm: 'HS256', secret: hsSecret },
      sessions: { redis: store.redis },
      apiKeys: { verify: async (key) => apiKeys[key] },
    })
    await store.redis.set(
      `${authNames.sessionKeyPrefix}valid-session`,
      JSON.stringify({ userId: 'user-3', role: 'admin', createdAt: sessionCreatedAt }),
      'EX',
      600,
    )
    await store.redis.set(`${authNames.sessionKeyPrefix}malformed-json`, '{"userId": "user-3", ')
    await store.redis.set(`${authNames.sessionKeyPrefix}wrong-shape`, JSON.stringify({ user: 'user-3' }))
  })
  afterAll(async () => {
    await auth.app.close()
    await store.cleanup()
  })

  const get = (url: string, headers: Record<string, string> = {}) =>
    auth.app.inject({ method: 'GET', url, headers })

  describe('session cookie', () => {
    it('when the session exists in Redis, then the principal is its user, issued when it was created and ending with its key', async () => {
      const asked = Date.now()
      const response = await get('/me', sessionCookie('valid-session'))
      expect(response.statusCode).toBe(200)
      const principal = response.json()
      expect(principal).toEqual({
        subject: 'user-3',
        kind: 'user',
        role: 'admin',
        roles: [],
        // first-party: not limited to scopes
        method: 'session',
        issuedAt: Date.parse(sessionCreatedAt),
        expiresAt: expect.any(Number),
      })
      // the key's time left (600 s, less what has passed) from the moment it was read
      expect(principal.expiresAt).toBeGreaterThan(asked + 590_000)
      expect(principal.expiresAt).toBeLessThanOrEqual(Date.now() + 600_000)
    })

    it('when the session id is unknown, empty or absurdly long, then 401 Invalid session', async () => {
      for (const id of ['no-such-session', '', 'x'.repeat(300)]) {
        const response = await get('/me', sessionCookie(id))
        const error = expectErrorEnvelope(response, 401, 'UNAUTHORIZED', { context: id })
        expect(error.message, id).toBe('Invalid session')
      }
    })

    it('when the stored session is malformed JSON or lacks its fields, then 401 Invalid session', async () => {
      for (const id of ['malformed-json', 'wrong-shape']) {
        const response = await get('/me', sessionCookie(id))
        const error = expectErrorEnvelope(response, 401, 'UNAUTHORIZED', { context: id })
        expect(error.message, id).toBe('Invalid session')
      }
    })

    it('when Redis is unreachable, then 503 SERVICE_UNAVAILABLE', async () => {
      const down = new Redis('redis://127.0.0.1:1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      })
      const offline = await buildAuthApp({
        jwt: { algorithm: 'HS256', secret: hsSecret },
        sessions: { redis: down },
      })
      try {
        const response = await offline.app.inject({
          method: 'GET',
          url: '/me',
          headers: sessionCookie('any'),
        })
        expectErrorEnvelope(response, 503, 'SERVICE_UNAVAILABLE')
      } finally {
        await offline.app.close()
        down.disconnect()
      }
    })
  })

  describe('API keys', () => {
    it('when a known key is sent in X-API-Key, then the principal is its owner', async () => {
      const response = await get('/me', { 'x-api-key': 'mk_live_valid-key' })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual(apiKeys['mk_live_valid-key'])
    })

    it('when the key is unknown or empty, then 401 Invalid API key', async () => {
      for (const key of ['mk_live_revoked', '']) {
        const response = await get('/me', { 'x-api-key': key })
        const error = expectErrorEnvelope(response, 401, 'UNAUTHORIZED', { context: key })
        expect(error.message, key).toBe('Invalid API key')
      }
    })

    it('when a service has no API keys configured, then a presented key is refused, not ignored', async () => {
      const withoutKeys = await buildAuthApp({ jwt: { algorithm: 'HS256', secret: hsSecret } })
      try {
        const response = await withoutKeys.app.inject({
          method: 'GET',
          url: '/me',
          headers: { 'x-api-key': 'mk_live_valid-key' },
        })
        expect(expectErrorEnvelope(response, 401, 'UNAUTHORIZED').message).toBe('Invalid API key')
      } finally {
        await withoutKeys.app.close()
      }
    })

    it('when an API key is in the query string (any of its names, any case), then 401 even on a public route', async () => {
      for (const query of [
        'api_key=k1',
        'API_KEY=k1',
        'apiKey=k1',
        'api-key=k1',
        'Key=k1',
        'x-api-key=k1',
        'X-Api-Key=k1',
        'api%5Fkey=k1',
        'page=2&apikey=k1',
      ]) {
        for (const path of ['/public', '/me', '/no-such-route']) {
          const response = await get(`${path}?${query}`, { 'x-api-key': 'mk_live_valid-key' })
          const error = expectErrorEnvelope(response, 401, 'UNAUTHORIZED', { context: `${path}?${query}` })
          expect(error.message, `${path}?${query}`).toBe('API keys are accepted only in the X-API-Key header')
        }
      }
    })

    it('when a key parameter is named with percent-escapes only, then it is still found', () => {
      for (const query of ['%6B%65%79=k1', '%4BEY=k1', 'api%2Dkey=k1', 'page=2&x%2Dapi%2Dkey=k1']) {
        expect(hasApiKeyInQuery(`/public?${query}`), query).toBe(true)
      }
      expect(hasApiKeyInQuery('/public?page=2&limit=20&sort=createdAt%3Adesc')).toBe(false)
    })

    it('when query parameters merely resemble key names, then the request passes', async () => {
      const response = await get('/public?keyword=x&monkey=y&api_keys_count=2')
      expect(response.statusCode).toBe(200)
    })

    it('when a key was sent in the URL, then the logs show the URL with the key masked and never the key', async () => {
      const secret = 'leaked-0123456789abcdef'
      await get(`/public?page=1&api_key=${secret}&Key=${secret}-2&sort=asc`)
      const logged = JSON.stringify(auth.logs)
      expect(logged).not.toContain(secret)
      const urls = auth.logs
        .map((line) => (line.req as { url?: string } | undefined)?.url)
        .filter((url): url is string => url?.startsWith('/public?page=1') ?? false)
      expect(urls).toContain('/public?page=1&api_key=[Redacted]&Key=[Redacted]&sort=asc')
    })

    it('when a URL is masked, then only the values of key parameters change', () => {
      expect(maskSecretsInUrl('/a?b=1&API-KEY=s&c')).toBe('/a?b=1&API-KEY=[Redacted]&c')
      expect(maskSecretsInUrl('/a?api%5fkey=s')).toBe('/a?api%5fkey=[Redacted]')
      expect(maskSecretsInUrl('/a?key')).toBe('/a?key=[Redacted]')
      expect(maskSecretsInUrl('/a/key=1')).toBe('/a/key=1')
    })
  })

  describe('order of credentials', () => {
    it('when no credential is sent, then 401 Missing token', async () => {
      const response = await get('/me')
      expect(expectErrorEnvelope(response, 401, 'UNAUTHORIZED').message).toBe('Missing token')
    })

    it('when the Authorization header is bad, then 401 even with a valid API key and session', async () => {
      const response = await get('/me', {
        ...bearer('not-a-token'),
        'x-api-key': 'mk_live_valid-key',
        ...sessionCookie('valid-session'),
      })
      expect(expectErrorEnvelope(response, 401, 'UNAUTHORIZED').message).toBe('Invalid or expired token')
    })

    it('when the API key is bad, then 401 even with a valid session', async () => {
      const response = await get('/me', { 'x-api-key': 'mk_live_revoked', ...sessionCookie('valid-session') })
      expect(expectErrorEnvelope(response, 401, 'UNAUTHORIZED').message).toBe('Invalid API key')
    })

    it('when a bearer token and an API key are both valid, then the bearer token wins', async () => {
      const response = await get('/me', { ...bearer(hsToken()), 'x-api-key': 'mk_live_valid-key' })
      expect(response.json()).toMatchObject({ subject: 'user-1', method: 'bearer' })
    })
  })

  describe('roles and ownership', () => {
    it('when the principal lacks the role, then 403 Insufficient permissions', async () => {
      const response = await get('/admin', bearer(hsToken(claims({ role: 'user', roles: ['editor'] }))))
      expect(expectErrorEnvelope(response, 403, 'FORBIDDEN').message).toBe('Insufficient permissions')
    })

    it('when the role is held as `role` or in `roles`, then requireRole passes', async () => {
      expect((await get('/admin', bearer(hsToken(claims({ role: 'admin' }))))).statusCode).toBe(200)
      expect(
        (await get('/admin', bearer(hsToken(claims({ role: 'user', roles: ['admin'] }))))).statusCode,
      ).toBe(200)
      expect((await get('/admin', sessionCookie('valid-session'))).statusCode).toBe(200)
    })

    it('when requireRole meets no credential, then 401 rather than 403', async () => {
      const response = await get('/admin')
      expect(expectErrorEnvelope(response, 401, 'UNAUTHORIZED').message).toBe('Missing token')
    })

    it('when a user reads their own resource, then it passes; another user’s, 403', async () => {
      expect((await get('/users/user-1', bearer(hsToken()))).statusCode).toBe(200)
      const response = await get('/users/user-2', bearer(hsToken()))
      expect(expectErrorEnvelope(response, 403, 'FORBIDDEN').message).toBe('Insufficient permissions')
    })

    it('when someone else’s resource is read with one of the allowed roles, then it passes', async () => {
      const response = await get(
        '/users/user-2',
        bearer(hsToken(claims({ role: 'user', roles: ['support'] }))),
      )
      expect(response.statusCode).toBe(200)
    })

    it('when a client token’s subject equals a user id, then it is not that user’s owner', async () => {
      const token = hsToken(claims({ sub: 'user-2', client_id: 'user-2', role: 'service' }))
      const response = await get('/users/user-2', bearer(token))
      expectErrorEnvelope(response, 403, 'FORBIDDEN')
    })
  })

  it('when a request is refused with 401, then the body is the error envelope and its requestId is X-Request-Id', async () => {
    const response = await get('/me', { 'x-request-id': 'req-auth-401', ...bearer('a.b.c') })
    expect(response.headers['x-request-id']).toBe('req-auth-401')
    const error = expectErrorEnvelope(response, 401, 'UNAUTHORIZED')
    // nothing beside the required fields: no details, no retryAfter
    expect(error).toEqual({
      code: 'UNAUTHORIZED',
      message: 'Invalid or expired token',
      requestId: 'req-auth-401',
      timestamp: error.timestamp,
    })
  })
})
