// API scopes at the gateway: its own operations (services, maintenance, dead letters) from its OpenAPI document, with
// API keys resolved at auth through Consul; and scoped keys refused through the gateway as at the service itself,
// with the real auth behind it (the reviewer's role change first), nothing changed.
import { randomUUID } from 'node:crypto'
import {
  type AuthProcess,
  asAdmin,
  describeServiceScopes,
  expectErrorEnvelope,
  fetchedAnswer,
  startAuthProcess,
  tokenEnv,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startGateway, type TestGateway } from './support/gateway.ts'

describeServiceScopes({
  service: 'gateway',
  // no routed services: the document is the gateway's own
  build: (env) => startGateway({ routes: [], env }),
  async served({ built, keyFor }) {
    const services = (key: string) =>
      built.app.inject({ method: 'GET', url: '/api/v1/admin/services', headers: { 'x-api-key': key } })
    const listed = await services(keyFor({ scopes: ['admin:read'] }))
    expect(listed.statusCode).toBe(200)
    expect(listed.json()).toEqual({ data: [] })
    // admin:read never makes a user an operator
    expectErrorEnvelope(await services(keyFor({ scopes: ['admin:read'], role: 'user' })), 403, 'FORBIDDEN')
  },
})

describe('gateway: scoped API keys through the gateway, with auth behind it', () => {
  let auth: AuthProcess
  let gateway: TestGateway
  /** the test's admin token (HS256, verified by auth and the gateway alike): first-party, no scopes */
  const root = asAdmin()

  beforeAll(async () => {
    auth = await startAuthProcess()
    gateway = await startGateway({
      routes: [
        { prefix: '/api/v1/users', service: 'auth' },
        { prefix: '/api/v1/api-keys', service: 'auth' },
      ],
      env: {
        ...tokenEnv,
        GATEWAY_SERVICE_NAMES: `auth=${auth.consulName}`,
        AUTH_SERVICE_NAME: auth.consulName,
      },
    })
  })
  afterAll(async () => {
    await gateway?.close()
    await auth?.stop()
  })

  async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return fetchedAnswer(response)
  }

  /** A user registered at auth through the gateway (an admin sets the role). */
  async function user(role: 'user' | 'admin'): Promise<string> {
    const created = await call('POST', '/api/v1/users', root, {
      name: `A ${role}`,
      email: `${role}.${randomUUID().slice(0, 8)}@example.com`,
      password: 'correct horse battery staple',
      role,
    })
    expect(created.statusCode).toBe(201)
    return (created.json() as { id: string }).id
  }

  /** An API key of `owner` with `scopes`, made by the root admin through the gateway. */
  async function keyOf(owner: string, scopes: string[]): Promise<Record<string, string>> {
    const created = await call('POST', '/api/v1/api-keys', root, { name: 'scoped', scopes, userId: owner })
    expect(created.statusCode).toBe(201)
    return { 'x-api-key': (created.json() as { key: string }).key }
  }

  it("when an admin's key with users:read changes another user's role through the gateway, then 403 INSUFFICIENT_SCOPE naming users:write, and the role is unchanged", async () => {
    const admin = await user('admin')
    const target = await user('user')
    const reader = await keyOf(admin, ['users:read'])

    const promote = await call('PATCH', `/api/v1/users/${target}`, reader, { role: 'admin' })
    expect(expectErrorEnvelope(promote, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs users:write',
    )
    const remove = await call('DELETE', `/api/v1/users/${target}`, reader)
    expect(expectErrorEnvelope(remove, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs users:write',
    )
    const read = await call('GET', `/api/v1/users/${target}`, reader)
    expect(read.statusCode).toBe(200)
    expect(read.json()).toMatchObject({ id: target, role: 'user' })

    // the scopes of an administrator's operation: the change goes through
    const operator = await keyOf(admin, ['users:write', 'admin:write'])
    expect((await call('PATCH', `/api/v1/users/${target}`, operator, { role: 'admin' })).statusCode).toBe(200)
  })

  it("when a key lacks the scope of the gateway's own operations, then 403 INSUFFICIENT_SCOPE naming it; with it, the key (resolved at auth) is served", async () => {
    const admin = await user('admin')
    const reader = await keyOf(admin, ['users:read'])
    const services = await call('GET', '/api/v1/admin/services', reader)
    expect(expectErrorEnvelope(services, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs admin:read',
    )
    const viewer = await keyOf(admin, ['admin:read'])
    expect((await call('GET', '/api/v1/admin/services', viewer)).statusCode).toBe(200)
    const switchOn = await call('PUT', '/api/v1/admin/services/auth/maintenance', viewer, {})
    expect(expectErrorEnvelope(switchOn, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs admin:write',
    )
    const state = await call('GET', '/api/v1/admin/services', viewer)
    expect(state.json()).toMatchObject({ data: [{ name: 'auth', maintenance: null }] })
  })
})
