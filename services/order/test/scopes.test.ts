// API scopes at order (orders, the sagas' admin view), from its OpenAPI document; and an API key served here,
// resolved at auth through Consul by the kit.
import { randomUUID } from 'node:crypto'
import { describeServiceScopes, expectErrorEnvelope } from '@meridian/testkit'
import { expect } from 'vitest'
import { buildOrderTestApp } from './support/app.ts'

describeServiceScopes({
  service: 'order',
  build: (env) => buildOrderTestApp(env),
  async served({ built, keyFor }) {
    const owner = randomUUID()
    const reader = keyFor({ scopes: ['orders:read'], role: 'user', subject: owner })
    const list = await built.app.inject({
      method: 'GET',
      url: `/api/v1/users/${owner}/orders`,
      headers: { 'x-api-key': reader },
    })
    expect(list.statusCode).toBe(200)
    expect(list.json()).toMatchObject({ data: [] })
    // the key's owner is a user: another user's orders stay theirs, whatever the scope
    const other = await built.app.inject({
      method: 'GET',
      url: `/api/v1/users/${randomUUID()}/orders`,
      headers: { 'x-api-key': reader },
    })
    expectErrorEnvelope(other, 403, 'FORBIDDEN')
  },
})
