// The chassis' OpenAPI document tells the truth: the statuses the chassis itself answers are on every route, errors in
// both media types, security schemes and requirements as routes declare them, and /metrics as it answers.
import { apiScopes, openIdScopes } from '@meridian/contracts'
import { expectErrorEnvelope, infraEndpoints } from '@meridian/testkit'
import { Redis } from 'ioredis'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceApp, errorResponses, type ServiceApp, security } from '../src/index.ts'

interface Operation {
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>
  security?: Record<string, string[]>[]
  parameters?: { name: string; in: string; required?: boolean }[]
}

describe('chassis: the OpenAPI document', () => {
  let app: ServiceApp
  let redis: Redis
  let document: {
    paths: Record<string, Record<string, Operation>>
    components: { securitySchemes: Record<string, Record<string, string>>; schemas: Record<string, unknown> }
  }

  beforeAll(async () => {
    redis = new Redis(infraEndpoints().redisUrl)
    app = await createServiceApp({
      name: 'openapi-test',
      version: '1.0.0',
      environment: 'test',
      logLevel: 'silent',
      rateLimit: { redis, max: 1000, timeWindowMs: 60_000 },
    })
    app.post(
      '/notes',
      {
        schema: {
          security: security.optional('posts:write'),
          body: Type.Object({ title: Type.String() }, { additionalProperties: false }),
          response: { 201: Type.Object({ title: Type.String() }), ...errorResponses(409) },
        },
      },
      async (request, reply) => reply.code(201).send(request.body),
    )
    app.get(
      '/notes/:id',
      { schema: { security: security.requires('posts:read'), params: Type.Object({ id: Type.String() }) } },
      async () => ({}),
    )
    app.get('/ping', { config: { rateLimit: false } }, async () => 'pong')
    app.post(
      '/sign-out/:who',
      {
        config: { optionalBody: true },
        schema: {
          params: Type.Object({ who: Type.String() }),
          body: Type.Object({ everywhere: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        },
      },
      async (request) => ({ body: request.body }),
    )
    await app.ready()
    document = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  })
  afterAll(async () => {
    await app.close()
    redis.disconnect()
  })

  const statuses = (path: string, method: string) =>
    Object.keys(document.paths[path]?.[method]?.responses ?? {}).sort()

  it('when a route reads a body, then 400, 413, 415 and 422 are documented with its own statuses, 429 and 500/503', () => {
    expect(statuses('/notes', 'post')).toEqual(
      ['201', '400', '401', '403', '409', '413', '415', '422', '429', '500', '503'].sort(),
    )
  })

  it('when a route has a path parameter, then a parameter that does not decode (400) or is too long (414) is documented', () => {
    expect(statuses('/notes/{id}', 'get')).toEqual(
      ['200', '400', '401', '403', '414', '422', '429', '500', '503'].sort(),
    )
  })

  it('when a route takes no input and is not rate limited, then only 500 and 503 are added to what it answers', () => {
    expect(statuses('/ping', 'get')).toEqual(['200', '500', '503'])
  })

  it('when an error status is documented, then it is the envelope as JSON and problem details as application/problem+json', () => {
    const conflict = document.paths['/notes']?.post?.responses['409']
    expect(conflict?.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } },
      'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } },
    })
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['ErrorEnvelope', 'ProblemDetails']),
    )
  })

  it('when routes declare credentials, then the schemes are in components and each operation lists its requirements with its scope', () => {
    expect(document.components.securitySchemes).toMatchObject({
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      sessionCookie: { type: 'apiKey', in: 'cookie', name: 'meridian_session' },
    })
    // the scoped credentials list the scope; a session carries none
    expect(document.paths['/notes/{id}']?.get?.security).toEqual([
      { bearerAuth: ['posts:read'] },
      { apiKeyAuth: ['posts:read'] },
      { sessionCookie: [] },
    ])
    // optional: anonymous callers too ({} first)
    expect(document.paths['/notes']?.post?.security).toEqual([
      {},
      { bearerAuth: ['posts:write'] },
      { apiKeyAuth: ['posts:write'] },
      { sessionCookie: [] },
    ])
    expect(document.paths['/ping']?.get?.security).toBeUndefined()
  })

  it('when the document is read, then the oauth2 scheme describes the provider and every scope of the catalogue with its description', () => {
    const oauth2 = document.components.securitySchemes.oauth2 as unknown as {
      type: string
      flows: Record<string, { tokenUrl: string; scopes: Record<string, string> }>
    }
    expect(oauth2.type).toBe('oauth2')
    expect(Object.keys(oauth2.flows).sort()).toEqual(['authorizationCode', 'clientCredentials'])
    for (const flow of Object.values(oauth2.flows)) {
      expect(flow.tokenUrl).toBe('/token')
      expect(flow.scopes).toEqual({ ...openIdScopes, ...apiScopes })
    }
    // no operation names it: the provider's tokens are sent as bearerAuth, which lists the scope
    for (const operations of Object.values(document.paths)) {
      for (const operation of Object.values(operations)) {
        expect(JSON.stringify(operation.security ?? [])).not.toContain('oauth2')
      }
    }
  })

  it('when a route lists a scope, then its 403 says what INSUFFICIENT_SCOPE means', () => {
    expect(document.paths['/notes/{id}']?.get?.responses['403']?.description).toContain('INSUFFICIENT_SCOPE')
  })

  it('when /metrics is documented, then its optional format, its 422 and both answers (JSON counters, Prometheus text) are there', async () => {
    const metrics = document.paths['/metrics']?.get
    expect(metrics?.parameters).toEqual([
      expect.objectContaining({ name: 'format', in: 'query', required: false }),
    ])
    expect(Object.keys(metrics?.responses ?? {}).sort()).toEqual(['200', '422', '500', '503'])
    expect(Object.keys(metrics?.responses['200']?.content ?? {}).sort()).toEqual([
      'application/json',
      'text/plain',
    ])
    const unknown = await app.inject({ method: 'GET', url: '/metrics?verbose=1' })
    expect(expectErrorEnvelope(unknown, 422, 'VALIDATION_ERROR').details).toEqual([
      { field: 'verbose', message: 'is not allowed', received: '1' },
    ])
  })
  it('when a route takes its body optionally, then no body is validated as {}, a JSON null is refused, and the document says the body is optional', async () => {
    const sent = (payload?: string) =>
      app.inject({
        method: 'POST',
        url: '/sign-out/me',
        ...(payload === undefined ? {} : { payload, headers: { 'content-type': 'application/json' } }),
      })
    const none = await sent()
    expect(none.statusCode).toBe(200)
    expect(none.json()).toEqual({ body: {} })
    expect((await sent('{"everywhere":true}')).json()).toEqual({ body: { everywhere: true } })
    expectErrorEnvelope(await sent('null'), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await sent('{"other":1}'), 422, 'VALIDATION_ERROR')

    const operations = document.paths as unknown as Record<
      string,
      Record<string, { requestBody?: { required?: boolean } }>
    >
    expect(operations['/sign-out/{who}']?.post?.requestBody?.required).toBe(false)
    expect(operations['/notes']?.post?.requestBody?.required).toBe(true)
  })
})
