// API scopes at shipping, from its OpenAPI document; and an API key served here, resolved at auth through Consul by
// the kit.
import { describeServiceScopes } from '@meridian/testkit'
import { expect } from 'vitest'
import { buildShippingTestApp } from './support/app.ts'

describeServiceScopes({
  service: 'shipping',
  build: (env) => buildShippingTestApp(env),
  async served({ built, keyFor }) {
    const list = await built.app.inject({
      method: 'GET',
      url: '/api/v1/shipments',
      headers: { 'x-api-key': keyFor({ scopes: ['shipments:read'], role: 'user' }) },
    })
    expect(list.statusCode).toBe(200)
    expect(list.json()).toMatchObject({ data: [] })
  },
})
