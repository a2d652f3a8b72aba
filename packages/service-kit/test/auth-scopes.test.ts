// API scopes: a route declares the scope it needs once (security.requires), and the authentication plugin enforces
// it for every credential limited to scopes — API keys, and access tokens of the OpenID provider — before validation,
// guards or handlers; first-party tokens and sessions act with the role alone; roles still apply after the scope.
import { authNames } from '@meridian/contracts'
import { captureLogs, expectErrorEnvelope, freshRedis, type TestRedis, uniqueName } from '@meridian/testkit'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceApp, type Principal, type ServiceApp, security } from '../src/index.ts'
import { bearer, claims, hsSecret, hsToken, issuer } from './auth-app.ts'

/** An API key of an owner with `role`, limited to `scopes`. */
const keyPrincipal = (role: string, scopes: string[]): Principal => ({
  subject: `owner-${role}`,
  kind: 'user',
  role,
  roles: [],
  scopes,
  method: 'api-key',
})

const apiKeys: Record<string, Principal> = {
  'key-users-read': keyPrincipal('admin', ['users:read']),
  'key-orders': keyPrincipal('user', ['orders:read', 'orders:write']),
  'key-admin-read': keyPrincipal('admin', ['admin:read']),
  'key-admin-read-of-user': keyPrincipal('user', ['admin:read']),
  'key-users-write': keyPrincipal('admin', ['users:write']),
}

const key = (name: keyof typeof apiKeys) => ({ [authNames.apiKeyHeader]: name })

/** An access token of the OpenID provider (client_id, scope) for the user `user-1` with `role`. */
const providerToken = (scope: string | undefined, role = 'user') =>
  hsToken(claims({ role, client_id: 'meridian-spa', ...(scope === undefined ? {} : { scope }) }))

describe('auth: API scopes', () => {
  let store: TestRedis
  let app: ServiceApp
  /** handler runs, by route: a refused request must never reach one */
  const reached: string[] = []

  beforeAll(async () => {
    store = freshRedis('auth-scopes')
    await store.redis.set(
      `${authNames.sessionKeyPrefix}admin-session`,
      JSON.stringify({ userId: 'user-3', role: 'admin', createdAt: new Date().toISOString() }),
    )
    app = await createServiceApp({
      name: uniqueName('scopes'),
      version: '1.0.0',
      environment: 'test',
      logLevel: 'silent',
      logStream: captureLogs().stream,
      rateLimit: false,
      authentication: {
        jwt: { algorithm: 'HS256', secret: hsSecret },
        issuer,
        audience: 'meridian',
        sessions: { redis: store.redis },
        apiKeys: { verify: async (presented) => apiKeys[presented] },
      },
    })
    app.get(
      '/orders/:id',
      { onRequest: app.authenticate, schema: { security: security.requires('orders:read') } },
      async (request) => {
        reached.push('GET /orders/:id')
        return { principal: request.principal }
      },
    )
    // the guard runs after validation here: the scope must still be checked first
    app.post(
      '/orders',
      {
        preHandler: app.authenticate,
        schema: {
          security: security.requires('orders:write'),
          body: Type.Object({ item: Type.String() }, { additionalProperties: false }),
        },
      },
      async () => {
        reached.push('POST /orders')
        return { placed: true }
      },
    )
    // a route that forgot its guard still has its declared scope checked on any credential sent
    app.delete('/orders/:id', { schema: { security: security.requires('orders:write') } }, async () => {
      reached.push('DELETE /orders/:id')
      return { removed: true }
    })
    app.get(
      '/admin/sagas',
      { onRequest: app.requireRole('admin'), schema: { security: security.requires('admin:read') } },
      async () => ({ sagas: [] }),
    )
    // anonymous callers are served; the credential is read (and its scope checked) only to set a role
    app.post(
      '/users',
      {
        schema: {
          security: security.optional('users:write'),
          body: Type.Object({ role: Type.Optional(Type.String()) }, { additionalProperties: false }),
        },
      },
      async (request, reply) => {
        if ((request.body as { role?: string }).role !== undefined) await app.principalOf(request)
        reached.push('POST /users')
        return reply.code(201).send({ created: true })
      },
    )
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
    await store?.cleanup()
  })

  const call = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    headers: Record<string, string>,
    body?: unknown,
  ) =>
    app.inject({
      method,
      url,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    })

  const expectInsufficientScope = (answer: Awaited<ReturnType<typeof call>>, scope: string) =>
    expect(expectErrorEnvelope(answer, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      `Insufficient scope: this operation needs ${scope}`,
    )

  describe('API keys', () => {
    it("when a key lacks the route's scope, then 403 INSUFFICIENT_SCOPE naming it, and the handler never runs", async () => {
      const before = reached.length
      expectInsufficientScope(await call('GET', '/orders/o-1', key('key-users-read')), 'orders:read')
      expectInsufficientScope(await call('DELETE', '/orders/o-1', key('key-users-read')), 'orders:write')
      expect(reached.length).toBe(before)
    })

    it("when a key holds the route's scope, then it is served", async () => {
      const answer = await call('GET', '/orders/o-1', key('key-orders'))
      expect(answer.statusCode).toBe(200)
      expect(answer.json()).toMatchObject({
        principal: { method: 'api-key', scopes: ['orders:read', 'orders:write'] },
      })
    })

    it('when a key lacks the scope of a route that validates first, then 403 before validation; with it, the 422', async () => {
      expectInsufficientScope(
        await call('POST', '/orders', key('key-users-read'), { wrong: 1 }),
        'orders:write',
      )
      expectErrorEnvelope(
        await call('POST', '/orders', key('key-orders'), { wrong: 1 }),
        422,
        'VALIDATION_ERROR',
      )
      expect((await call('POST', '/orders', key('key-orders'), { item: 'x' })).statusCode).toBe(200)
    })

    it('when a route reads no credential itself, then a key sent to it still needs its scope', async () => {
      expectInsufficientScope(await call('DELETE', '/orders/o-2', key('key-users-read')), 'orders:write')
      expect((await call('DELETE', '/orders/o-2', key('key-orders'))).statusCode).toBe(200)
    })

    it('when a key holds the scope but its owner lacks the role, then 403 FORBIDDEN: a scope never grants more than the role', async () => {
      expect((await call('GET', '/admin/sagas', key('key-admin-read'))).statusCode).toBe(200)
      expectErrorEnvelope(await call('GET', '/admin/sagas', key('key-admin-read-of-user')), 403, 'FORBIDDEN')
      // an admin's key without the scope: the scope refuses first
      expectInsufficientScope(await call('GET', '/admin/sagas', key('key-users-read')), 'admin:read')
    })

    it('when a key is unknown, then 401 Invalid API key, not 403', async () => {
      const answer = await call('GET', '/orders/o-1', { [authNames.apiKeyHeader]: 'no-such-key' })
      expect(expectErrorEnvelope(answer, 401, 'UNAUTHORIZED').message).toBe('Invalid API key')
    })

    it('when a route serves anonymous callers, then a key is checked only where it is read: to set a role it needs users:write', async () => {
      expect((await call('POST', '/users', key('key-users-read'), {})).statusCode).toBe(201)
      expectInsufficientScope(
        await call('POST', '/users', key('key-users-read'), { role: 'admin' }),
        'users:write',
      )
      expect((await call('POST', '/users', key('key-users-write'), { role: 'admin' })).statusCode).toBe(201)
    })
  })

  describe('access tokens', () => {
    it("when an OpenID provider token's scope lacks the route's, then 403 INSUFFICIENT_SCOPE; with it, served", async () => {
      expectInsufficientScope(
        await call('GET', '/orders/o-1', bearer(providerToken('openid users:read'))),
        'orders:read',
      )
      const served = await call('GET', '/orders/o-1', bearer(providerToken('openid orders:read')))
      expect(served.statusCode).toBe(200)
      expect(served.json()).toMatchObject({ principal: { scopes: ['openid', 'orders:read'] } })
    })

    it('when a provider token carries no scope at all (client_id alone), then it holds none', async () => {
      expectInsufficientScope(
        await call('GET', '/orders/o-1', bearer(providerToken(undefined))),
        'orders:read',
      )
      const client = hsToken(claims({ sub: 'billing', client_id: 'billing', role: '' }))
      expectInsufficientScope(await call('GET', '/orders/o-1', bearer(client)), 'orders:read')
    })

    it('when a first-party token (POST /login: no scope, no client_id) or a cookie session is used, then the role alone decides', async () => {
      const answer = await call('GET', '/orders/o-1', bearer(hsToken()))
      expect(answer.statusCode).toBe(200)
      expect(answer.json()).toMatchObject({ principal: { method: 'bearer' } })
      expect((answer.json() as { principal: Principal }).principal.scopes).toBeUndefined()
      const session = { cookie: `${authNames.sessionCookie}=admin-session` }
      expect((await call('GET', '/admin/sagas', session)).statusCode).toBe(200)
      expect((await call('GET', '/admin/sagas', bearer(hsToken(claims({ role: 'admin' }))))).statusCode).toBe(
        200,
      )
    })
  })

  it('when a route takes a credential but lists no scope, then the app refuses to start, naming the route', async () => {
    const careless = await createServiceApp({
      name: uniqueName('careless'),
      version: '1.0.0',
      environment: 'test',
      logLevel: 'silent',
      rateLimit: false,
      authentication: { jwt: { algorithm: 'HS256', secret: hsSecret }, issuer, audience: 'meridian' },
    })
    try {
      expect(() =>
        careless.get(
          '/careless',
          { schema: { security: [{ bearerAuth: [] }, { apiKeyAuth: [] }] } },
          async () => ({}),
        ),
      ).toThrow('GET /careless takes a credential but declares no scope')
    } finally {
      await careless.close()
    }
  })
})
