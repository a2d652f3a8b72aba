// API keys at a service other than auth, as authOptionsFromEnv wires them: introspected at auth found in Consul
// (AUTH_SERVICE_NAME), from the first key presented on; auth missing from Consul is 503, never a refusal.
import {
  captureLogs,
  infraEndpoints,
  startApiKeysStandIn,
  testServiceCredential,
  uniqueName,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiKeysFromDiscoveredAuth, authOptionsFromEnv } from '../src/auth/index.ts'
import { createServiceApp, type ServiceApp, security } from '../src/index.ts'
import { hsSecret, issuer } from './auth-app.ts'

const consul = () => ({
  address: infraEndpoints().consulHttpAddr,
  ...(infraEndpoints().consulToken ? { token: infraEndpoints().consulToken } : {}),
})

describe('auth: API keys introspected at auth found in Consul', () => {
  let standIn: Awaited<ReturnType<typeof startApiKeysStandIn>>
  let app: ServiceApp

  beforeAll(async () => {
    standIn = await startApiKeysStandIn()
    app = await createServiceApp({
      name: uniqueName('keys-at-auth'),
      version: '1.0.0',
      environment: 'test',
      logLevel: 'silent',
      logStream: captureLogs().stream,
      rateLimit: false,
      // what a service's config gives: its AUTH_SERVICE_NAME and Consul
      authentication: authOptionsFromEnv({
        JWT_ALGORITHM: 'HS256',
        JWT_SECRET: hsSecret,
        AUTH_JWKS_URL: 'http://127.0.0.1:9/.well-known/jwks.json',
        JWT_ISSUER: issuer,
        JWT_AUDIENCE: 'meridian',
        AUTH_SERVICE_NAME: standIn.name,
        AUTH_DISCOVERY_WAIT_MS: 3000,
        SERVICE_CREDENTIAL: testServiceCredential,
        CONSUL_HTTP_ADDR: consul().address,
        ...(consul().token ? { CONSUL_HTTP_TOKEN: consul().token } : {}),
      }),
    })
    app.get(
      '/orders',
      { onRequest: app.authenticate, schema: { security: security.requires('orders:read') } },
      async (request) => ({ subject: request.principal?.subject, scopes: request.principal?.scopes }),
    )
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
    await standIn?.close()
  })

  it('when no key was presented yet, then auth was never asked; a known key is then served with its scopes', async () => {
    expect((await app.inject({ method: 'GET', url: '/orders' })).statusCode).toBe(401)
    expect(standIn.introspections()).toBe(0)
    const key = standIn.keyFor({ scopes: ['orders:read'], subject: 'owner-1' })
    const answer = await app.inject({ method: 'GET', url: '/orders', headers: { 'x-api-key': key } })
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({ subject: 'owner-1', scopes: ['orders:read'] })
    // remembered: a second use does not ask again
    await app.inject({ method: 'GET', url: '/orders', headers: { 'x-api-key': key } })
    expect(standIn.introspections()).toBe(1)
  })

  it('when auth has no instance in Consul, then a key is answered 503 after the discovery wait, not refused', async () => {
    const keys = apiKeysFromDiscoveredAuth({
      consul: consul(),
      serviceName: uniqueName('no-auth-here'),
      discoveryWaitMs: 300,
      serviceCredential: testServiceCredential,
      logger: app.log,
    })
    try {
      await expect(keys.verify('mk_0123456789ab_whatever')).rejects.toMatchObject({
        statusCode: 503,
        code: 'SERVICE_UNAVAILABLE',
      })
    } finally {
      await keys.close()
    }
    // closed: nothing is known about a key any more
    await expect(keys.verify('mk_0123456789ab_whatever')).rejects.toMatchObject({ statusCode: 503 })
  })
})
