// API scopes at realtime-gateway's REST resources (chat rooms, documents), from its OpenAPI document; and an API key
// served here, resolved at auth through Consul by the kit.
import { describeServiceScopes, expectErrorEnvelope } from '@meridian/testkit'
import { expect } from 'vitest'
import { buildRealtimeGatewayTestApp } from './support/app.ts'

describeServiceScopes({
  service: 'realtime-gateway',
  build: (env) => buildRealtimeGatewayTestApp(env),
  async served({ built, keyFor }) {
    const create = (url: string, key: string, payload: Record<string, string>) =>
      built.app.inject({
        method: 'POST',
        url,
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload,
      })
    const room = await create('/api/v1/chat/rooms', keyFor({ scopes: ['chat:write'], role: 'user' }), {
      name: 'Scoped room',
    })
    expect(room.statusCode).toBe(201)
    const document = await create(
      '/api/v1/documents',
      keyFor({ scopes: ['documents:write'], role: 'user' }),
      {
        title: 'Scoped notes',
      },
    )
    expect(document.statusCode).toBe(201)
    // a chat key is no document key
    const refused = await create('/api/v1/documents', keyFor({ scopes: ['chat:write', 'chat:read'] }), {
      title: 'Not with this key',
    })
    expect(expectErrorEnvelope(refused, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs documents:write',
    )
  },
})
