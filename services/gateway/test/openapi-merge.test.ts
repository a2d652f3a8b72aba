// The gateway's merged document says what a client of the gateway can get: each routed operation of a service, with
// the statuses the gateway answers itself added, referring to schemas the merged document holds.
import { describe, expect, it } from 'vitest'
import { gatewayStatuses, mergeOpenApi } from '../src/operations/openapi-aggregate.ts'
import { withVersionAliases } from '../src/proxy/route-table.ts'

const envelope = { $ref: '#/components/schemas/ErrorEnvelope' }

describe('gateway: merged OpenAPI document', () => {
  const own = {
    openapi: '3.1.0',
    paths: { '/health': { get: { responses: { '200': { description: 'ok' } } } } },
    components: { schemas: { ErrorEnvelope: { type: 'object' }, ProblemDetails: { type: 'object' } } },
  }
  const users = {
    openapi: '3.1.0',
    paths: {
      '/api/v1/users': {
        get: {
          responses: {
            '200': { description: 'a page' },
            '429': {
              description: "the service's own",
              content: { 'application/json': { schema: envelope } },
            },
          },
        },
      },
      '/internal/api-keys/introspect': { post: { responses: { '200': { description: 'not routed' } } } },
    },
  }
  const merged = mergeOpenApi(
    own,
    [{ name: 'auth', document: users }],
    withVersionAliases([{ prefix: '/api/v1/users', service: 'auth' }]),
  )

  it('when a service operation is routed, then it carries the gateway statuses (400, 429, 502, 503, 504) besides its own', () => {
    const usersPath = merged.paths?.['/api/v1/users'] as { get: { responses: Record<string, unknown> } }
    const responses = usersPath.get.responses
    expect(Object.keys(responses).sort()).toEqual(['200', ...gatewayStatuses.map(String)].sort())
    // what the service documents stays as it is
    expect(responses['429']).toEqual(users.paths['/api/v1/users'].get.responses['429'])
    expect(responses['504']).toEqual({
      description: expect.any(String),
      content: {
        'application/json': { schema: envelope },
        'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } },
      },
    })
  })

  it('when the merged document is read, then every $ref points into its own components, and unrouted paths are left out', () => {
    const refs = new Set<string>()
    JSON.stringify(merged, (key, value) => {
      if (key === '$ref') refs.add(value)
      return value
    })
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//)
      expect(merged.components?.schemas).toHaveProperty(ref.split('/').at(-1) as string)
    }
    expect(merged.paths).not.toHaveProperty('/internal/api-keys/introspect')
    expect(merged.paths).toHaveProperty('/health')
  })
})
