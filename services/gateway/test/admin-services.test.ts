// /api/v1/admin/services: an admin sees each routed service's instances in Consul with their health, and turns its
// maintenance switch on and off in Consul KV; anyone else is refused, an admin whose credentials auth revoked at once,
// and a bad request changes nothing.
import { randomUUID } from 'node:crypto'
import { authNames, type CredentialRevocation } from '@meridian/contracts'
import {
  accessToken,
  asAdmin,
  asUser,
  consulApi,
  expectErrorEnvelope,
  infraEndpoints,
  tokenEnv,
  uniqueName,
} from '@meridian/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, startGateway, type TestGateway } from './support/gateway.ts'
import { startUpstream, type UpstreamProcess } from './support/upstream-process.ts'

describe('gateway: /api/v1/admin/services', () => {
  let gateway: TestGateway
  let upstream: UpstreamProcess
  const service = uniqueName('widgets')
  const key = () => `${consulApi().baseUrl}/v1/kv/meridian/${service}/maintenance`

  beforeAll(async () => {
    upstream = await startUpstream({ name: service, label: 'only', segment: 'widgets' })
    gateway = await startGateway({ routes: [{ prefix: '/api/v1/widgets', service }], env: { ...tokenEnv } })
    await eventually(() => gateway.app.upstreams.get(service)?.status()?.instances === 1)
  })

  afterAll(async () => {
    await fetch(key(), { method: 'DELETE', headers: consulApi().headers })
    await gateway?.close()
    await upstream?.stop()
    await upstream?.deregister()
  })

  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    gateway.app.inject({
      method: method as 'GET',
      url: path,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    })

  it('when an admin lists the services, then each routed one has its instances with their health and its switch off', async () => {
    const answer = await call('GET', '/api/v1/admin/services', asAdmin())
    expect(answer.statusCode).toBe(200)
    expect(answer.json().data).toEqual([
      {
        name: service,
        consulName: service,
        instances: [
          expect.objectContaining({
            address: '127.0.0.1',
            port: expect.any(Number),
            health: 'passing',
            checks: expect.any(Array),
          }),
        ],
        maintenance: null,
      },
    ])
  })

  it('when an admin turns maintenance on, then Consul KV holds it and the list shows it; off removes it', async () => {
    const on = await call('PUT', `/api/v1/admin/services/${service}/maintenance`, asAdmin(), {
      message: 'Moving to a new database',
      retryAfter: 120,
    })
    expect(on.statusCode).toBe(200)
    expect(on.json().maintenance).toEqual({ message: 'Moving to a new database', retryAfter: 120 })
    const stored = await fetch(`${key()}?raw`, { headers: consulApi().headers })
    expect(await stored.json()).toEqual({ message: 'Moving to a new database', retryAfter: 120 })

    const defaults = await call('PUT', `/api/v1/admin/services/${service}/maintenance`, asAdmin(), {})
    expect(defaults.json().maintenance).toEqual({ message: 'Service under maintenance', retryAfter: 60 })

    const off = await call('DELETE', `/api/v1/admin/services/${service}/maintenance`, asAdmin())
    expect(off.statusCode).toBe(204)
    expect((await fetch(key(), { headers: consulApi().headers })).status).toBe(404)
    const listed = await call('GET', '/api/v1/admin/services', asAdmin())
    expect(listed.json().data[0].maintenance).toBeNull()

    // each switch is in the gateway's audit trail, newest first, with who, from where and the request's id
    const trail = await call('GET', '/api/v1/admin/audit/gateway?limit=3', asAdmin())
    expect(trail.json().data).toEqual(
      [
        ['maintenance.off', {}],
        ['maintenance.on', { message: 'Service under maintenance', retryAfter: 60 }],
        ['maintenance.on', { message: 'Moving to a new database', retryAfter: 120 }],
      ].map(([action, detail]) =>
        expect.objectContaining({
          service: 'gateway',
          action,
          target: `service:${service}`,
          detail,
          actor: expect.stringMatching(/^user:/),
          address: '127.0.0.1',
          requestId: expect.any(String),
        }),
      ),
    )
  })

  it('when the caller is not an admin or not signed in, then 403 or 401 and the switch is untouched', async () => {
    expectErrorEnvelope(await call('GET', '/api/v1/admin/services', asUser()), 403, 'FORBIDDEN')
    expectErrorEnvelope(await call('GET', '/api/v1/admin/services', {}), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(
      await call('PUT', `/api/v1/admin/services/${service}/maintenance`, asUser(randomUUID()), {}),
      403,
      'FORBIDDEN',
    )
    expectErrorEnvelope(
      await call('DELETE', `/api/v1/admin/services/${service}/maintenance`, {}),
      401,
      'UNAUTHORIZED',
    )
    expect((await fetch(key(), { headers: consulApi().headers })).status).toBe(404)
  })

  it('when the service is not routed or the body is bad, then 404 or 422 and nothing is written', async () => {
    expectErrorEnvelope(
      await call('PUT', '/api/v1/admin/services/nope/maintenance', asAdmin(), {}),
      404,
      'NOT_FOUND',
    )
    for (const body of [
      { retryAfter: 0 },
      { message: '' },
      { message: 'x', extra: true },
      { retryAfter: 'soon' },
    ]) {
      const refused = await call('PUT', `/api/v1/admin/services/${service}/maintenance`, asAdmin(), body)
      expectErrorEnvelope(refused, 422, 'VALIDATION_ERROR')
    }
    expectErrorEnvelope(
      await call('PUT', '/api/v1/admin/services/Bad%20Name/maintenance', asAdmin(), {}),
      422,
      'VALIDATION_ERROR',
    )
    expect((await fetch(key(), { headers: consulApi().headers })).status).toBe(404)
  })

  it("when auth revokes an admin's credentials (demoted, suspended or deleted), then their token gets 401 at the admin routes as the revocation is announced and changes nothing", async () => {
    const adminId = randomUUID()
    const admin = { authorization: `Bearer ${accessToken('admin', adminId)}` }
    expect((await call('GET', '/api/v1/admin/services', admin)).statusCode).toBe(200)

    // what auth writes (services/auth, credential-revocations-store.ts): the record, and its announcement
    const redis = new Redis(infraEndpoints().redisUrl)
    const revocationKey = `${authNames.revocationKeyPrefix}${adminId}`
    try {
      const now = Date.now()
      const revocation: CredentialRevocation = { userId: adminId, revokedBefore: now, until: now + 60_000 }
      const text = JSON.stringify(revocation)
      await redis
        .multi()
        .set(revocationKey, text, 'PX', 60_000)
        .publish(authNames.revocationChannel, text)
        .exec()

      // "within a second" by its mechanism: the announcement is pushed and applied on arrival, so once the gateway has
      // heard a later one on the same connection (pub/sub keeps its order), the token is refused with no more waiting
      const marker = randomUUID()
      const later: CredentialRevocation = { userId: marker, revokedBefore: now, until: now + 60_000 }
      await redis.publish(authNames.revocationChannel, JSON.stringify(later))
      await eventually(() => gateway.app.credentialRevocations.revokedBefore(marker) > 0)
      const refused = expectErrorEnvelope(
        await call('GET', '/api/v1/admin/services', admin),
        401,
        'UNAUTHORIZED',
      )
      expect(refused.message).toBe('Invalid or expired token')
      expectErrorEnvelope(await call('GET', '/api/v1/admin/dead-letters', admin), 401, 'UNAUTHORIZED')
      const path = `/api/v1/admin/services/${service}/maintenance`
      expectErrorEnvelope(await call('PUT', path, admin, {}), 401, 'UNAUTHORIZED')
      expect((await fetch(key(), { headers: consulApi().headers })).status).toBe(404)
      // another admin is not concerned
      expect((await call('GET', '/api/v1/admin/services', asAdmin())).statusCode).toBe(200)
    } finally {
      await redis.del(revocationKey)
      redis.disconnect()
    }
  })
})

describe('gateway: /api/v1/admin/services for a service under another Consul name', () => {
  let gateway: TestGateway
  const logical = uniqueName('gadgets')
  const consulName = `${logical}-run`
  const keyOf = (name: string) => `${consulApi().baseUrl}/v1/kv/meridian/${name}/maintenance`

  beforeAll(async () => {
    gateway = await startGateway({
      routes: [{ prefix: '/api/v1/gadgets', service: logical }],
      env: { ...tokenEnv, GATEWAY_SERVICE_NAMES: `${logical}=${consulName}` },
    })
  })
  afterAll(async () => {
    await fetch(keyOf(consulName), { method: 'DELETE', headers: consulApi().headers })
    await gateway?.close()
  })

  it('when an admin switches it, then the key is the one its instances follow (their Consul name), not the logical name', async () => {
    const on = await gateway.app.inject({
      method: 'PUT',
      url: `/api/v1/admin/services/${logical}/maintenance`,
      headers: { ...asAdmin(), 'content-type': 'application/json' },
      payload: '{}',
    })
    expect(on.json()).toMatchObject({ name: logical, consulName, maintenance: { retryAfter: 60 } })
    expect((await fetch(keyOf(consulName), { headers: consulApi().headers })).status).toBe(200)
    expect((await fetch(keyOf(logical), { headers: consulApi().headers })).status).toBe(404)
  })
})
