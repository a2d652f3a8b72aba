// Another service accepting API keys: its authentication plugin asks auth (POST /internal/api-keys/introspect), with
// the services' shared credential, which auth's route demands of every caller.
import type { AddressInfo } from 'node:net'
import { AppError } from '@meridian/contracts'
import {
  apiKeysFromAuth,
  authPlugin,
  createServiceApp,
  type ServiceApp,
  security,
} from '@meridian/service-kit'
import { asService, expectErrorEnvelope, rawJsonPost, testServiceCredential } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { signedIn } from './identities.ts'

let auth: AuthTestApp
let authUrl: string
let service: ServiceApp
let keys: ReturnType<typeof apiKeysFromAuth>

beforeAll(async () => {
  auth = await buildAuthTestApp()
  authUrl = await auth.app.listen({ host: '127.0.0.1', port: 0 })
  // a service of its own (no database): what order or payment will do with the chassis
  keys = apiKeysFromAuth({
    authUrl,
    serviceCredential: testServiceCredential,
    acceptedForMs: 0,
    refusedForMs: 0,
  })
  service = await createServiceApp({
    name: 'introspection-test',
    version: '0.0.0',
    environment: 'test',
    logLevel: 'silent',
    rateLimit: false,
  })
  await service.register(authPlugin, {
    jwt: { algorithm: 'RS256', jwksUrl: `${authUrl}/.well-known/jwks.json` },
    issuer: auth.config.JWT_ISSUER,
    audience: auth.config.JWT_AUDIENCE,
    apiKeys: keys,
  })
  service.get('/whoami', { preHandler: service.authenticate }, async (request) => {
    if (!request.principal) throw AppError.unauthorized()
    const { subject, role, scopes, method, emailVerified } = request.principal
    return { subject, role, scopes, method, emailVerified }
  })
  await service.ready()
})

afterAll(async () => {
  await service?.close()
  await keys?.close()
  await auth?.close()
})

const whoami = (key: string) =>
  service.inject({ method: 'GET', url: '/whoami', headers: { 'x-api-key': key } })

describe('API keys at another service', () => {
  it("when a valid key is presented, then the service knows its owner, role, scopes and whether the owner's address is verified (as it is now); once revoked, it is refused", async () => {
    const owner = await signedIn(auth, { role: 'admin' })
    const created = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: owner.headers,
      payload: { name: 'orders bot', scopes: ['orders:read'] },
    })
    const { id, key } = created.json() as { id: string; key: string }

    const accepted = await whoami(key)
    expect(accepted.statusCode).toBe(200)
    expect(accepted.json()).toEqual({
      subject: owner.user.id,
      role: 'admin',
      scopes: ['orders:read'],
      method: 'api-key',
      emailVerified: false,
    })
    // as a used verification link leaves the row (this service asks every time: acceptedForMs 0)
    await auth.sql`update users set email_verified = true where id = ${owner.user.id}`
    expect((await whoami(key)).json()).toMatchObject({ subject: owner.user.id, emailVerified: true })

    await auth.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers: owner.headers })
    const refused = await whoami(key)
    expect(expectErrorEnvelope(refused, 401, 'UNAUTHORIZED').message).toBe('Invalid API key')
  })

  it('when an unknown key is presented, then 401, and auth says nothing but active: false', async () => {
    const unknown = `mk_0123456789ab_${'x'.repeat(43)}`
    expect((await whoami(unknown)).statusCode).toBe(401)
    const answer = await auth.app.inject({
      method: 'POST',
      url: '/internal/api-keys/introspect',
      headers: asService(),
      payload: { key: unknown },
    })
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({ active: false })
  })

  it("when an admin's key holding admin:read is used at a service that remembers keys, then its admin route serves it; once the owner is demoted, 403 at once", async () => {
    // the production timings (an accepted key believed for 30 s) and auth's revocations followed, as every service
    const remembering = apiKeysFromAuth({ authUrl, serviceCredential: testServiceCredential })
    const operator = await createServiceApp({
      name: 'introspection-demotion-test',
      version: '0.0.0',
      environment: 'test',
      logLevel: 'silent',
      rateLimit: false,
    })
    await operator.register(authPlugin, {
      jwt: { algorithm: 'RS256', jwksUrl: `${authUrl}/.well-known/jwks.json` },
      issuer: auth.config.JWT_ISSUER,
      audience: auth.config.JWT_AUDIENCE,
      apiKeys: remembering,
      revocations: { redis: auth.redis },
    })
    operator.get(
      '/admin/sagas',
      { onRequest: operator.requireRole('admin'), schema: { security: security.requires('admin:read') } },
      async () => ({ data: [] }),
    )
    try {
      const owner = await signedIn(auth, { role: 'admin' })
      const root = await signedIn(auth, { role: 'admin' })
      const created = await auth.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: owner.headers,
        payload: { name: 'operator bot', scopes: ['admin:read'] },
      })
      const { key } = created.json() as { key: string }
      const sagas = () =>
        operator.inject({ method: 'GET', url: '/admin/sagas', headers: { 'x-api-key': key } })
      expect((await sagas()).statusCode).toBe(200)

      const demoted = await auth.app.inject({
        method: 'PATCH',
        url: `/api/v1/users/${owner.user.id}`,
        headers: { ...root.headers, 'content-type': 'application/json' },
        payload: { role: 'user' },
      })
      expect(demoted.statusCode).toBe(200)
      // the remembered answer predates the revocation: auth is asked again, and the key acts with the new role
      await expect.poll(async () => (await sagas()).statusCode).toBe(403)
      expectErrorEnvelope(await sagas(), 403, 'FORBIDDEN')
    } finally {
      await operator.close()
      await remembering.close()
    }
  })

  it('when auth cannot be reached, then the service answers 503, not 401 (the key may well be valid)', async () => {
    const unreachable = apiKeysFromAuth({
      authUrl: 'http://127.0.0.1:9',
      serviceCredential: testServiceCredential,
      acceptedForMs: 0,
    })
    try {
      await expect(unreachable.verify('mk_0123456789ab_whatever')).rejects.toMatchObject({
        statusCode: 503,
        code: 'SERVICE_UNAVAILABLE',
      })
    } finally {
      await unreachable.close()
    }
  })
})

describe("auth's introspection and the service credential", () => {
  let key: string
  beforeAll(async () => {
    const owner = await signedIn(auth, { role: 'user' })
    const created = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: owner.headers,
      payload: { name: 'introspected', scopes: ['orders:read'] },
    })
    key = (created.json() as { key: string }).key
  })

  const introspect = (headers: [string, string][]) =>
    rawJsonPost(
      (auth.app.server.address() as AddressInfo).port,
      '/internal/api-keys/introspect',
      { key },
      headers,
    )

  it('when a caller on the network sends no credential or a wrong one, then 401 and not a word about the key', async () => {
    for (const headers of [
      [],
      [['X-Service-Credential', 'insecure-development-service-credential-0001']],
      [['X-Service-Credential', `${testServiceCredential}-but-longer`]],
      [['X-Api-Key', key]],
    ] as [string, string][][]) {
      const answer = await introspect(headers)
      const context = headers.map(([name]) => name).join(', ') || 'no header'
      expectErrorEnvelope(answer, 401, 'UNAUTHORIZED', { context })
      expect(JSON.stringify(answer.json()), context).not.toContain('active')
    }
  })

  it('when a service sends the credential, then auth says whose the key is', async () => {
    const answer = await introspect([['X-Service-Credential', testServiceCredential]])
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toMatchObject({ active: true, scopes: ['orders:read'] })
  })

  it("when a service's credential is wrong, then its callers' keys are not taken (502), never let in", async () => {
    const misconfigured = apiKeysFromAuth({
      authUrl,
      serviceCredential: 'a-credential-auth-does-not-know-0123456789',
      acceptedForMs: 0,
      refusedForMs: 0,
    })
    try {
      await expect(misconfigured.verify(key)).rejects.toMatchObject({ statusCode: 502 })
    } finally {
      await misconfigured.close()
    }
  })
})
