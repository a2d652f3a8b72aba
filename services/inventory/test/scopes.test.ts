// API scopes at inventory (the catalogue's changes), from its OpenAPI document; and an API key served here,
// resolved at auth through Consul by the kit.
import { randomUUID } from 'node:crypto'
import { describeServiceScopes, expectErrorEnvelope } from '@meridian/testkit'
import { expect } from 'vitest'
import { buildInventoryTestApp } from './support/app.ts'

describeServiceScopes({
  service: 'inventory',
  build: (env) => buildInventoryTestApp(env),
  async served({ built, keyFor }) {
    const add = (key: string) =>
      built.app.inject({
        method: 'POST',
        url: '/api/v1/products',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: { sku: `SKU-${randomUUID().slice(0, 8)}`, name: 'Scoped lamp', price: 12.5, stock: 3 },
      })
    const added = await add(keyFor({ scopes: ['products:write'] }))
    expect(added.statusCode).toBe(201)
    expect(added.json()).toMatchObject({ name: 'Scoped lamp', available: 3 })
    // products:write never makes a user an admin
    expectErrorEnvelope(await add(keyFor({ scopes: ['products:write'], role: 'user' })), 403, 'FORBIDDEN')
  },
})
