// API scopes at notification, from its OpenAPI document; and an API key served here, resolved at auth through
// Consul by the kit.
import { describeServiceScopes } from '@meridian/testkit'
import { expect } from 'vitest'
import { buildNotificationTestApp } from './support/app.ts'

describeServiceScopes({
  service: 'notification',
  build: (env) => buildNotificationTestApp(env),
  async served({ built, keyFor }) {
    const list = await built.app.inject({
      method: 'GET',
      url: '/api/v1/notifications',
      headers: { 'x-api-key': keyFor({ scopes: ['notifications:read'], role: 'user' }) },
    })
    expect(list.statusCode).toBe(200)
    expect(list.json()).toMatchObject({ data: [] })
  },
})
