// The OpenAPI document generated from the route schemas is valid OpenAPI 3.1 and describes the users resource.
import { apiScopeNames } from '@meridian/contracts'
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'

describe('auth OpenAPI document', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp()
  })
  afterAll(async () => {
    await auth.close()
  })

  it('when /docs/json is fetched, then it validates as OpenAPI 3.1 and lists every users operation under /api/v1', async () => {
    const response = await auth.app.inject({ method: 'GET', url: '/docs/json' })
    expect(response.statusCode).toBe(200)
    const document = response.json()
    const result = await new Validator().validate(document)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(document.openapi).toBe('3.1.0')
    expect(Object.keys(document.paths['/api/v1/users'] ?? {}).sort()).toEqual(['get', 'post'])
    expect(Object.keys(document.paths['/api/v1/users/{id}'] ?? {}).sort()).toEqual(['delete', 'get', 'patch'])
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/api/users'))).toEqual([])
    const create = document.paths['/api/v1/users'].post
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '409', '422']))
    expect(JSON.stringify(create.requestBody)).toContain('password')
    expect(JSON.stringify(create.responses['201'])).not.toContain('password')
  })

  it('when /docs/json is fetched, then the credential routes are documented at their spec paths with every status', async () => {
    const document = (await auth.app.inject({ method: 'GET', url: '/docs/json' })).json()
    for (const path of ['/login', '/refresh', '/logout']) {
      expect(Object.keys(document.paths[path] ?? {})).toEqual(['post'])
    }
    // the cookie's own path: POST refreshes, DELETE signs out of it
    expect(Object.keys(document.paths['/api/auth/refresh'] ?? {}).sort()).toEqual(['delete', 'post'])
    expect(Object.keys(document.paths['/logout'].post.responses)).toEqual(
      expect.arrayContaining(['204', '422']),
    )
    expect(JSON.stringify(document.paths['/logout'].post.requestBody)).toContain('refreshToken')
    expect(Object.keys(document.paths['/.well-known/jwks.json'] ?? {})).toEqual(['get'])
    expect(Object.keys(document.paths['/login'].post.responses).sort()).toEqual(
      ['200', '204', '400', '401', '413', '415', '422', '429', '500', '503'].sort(),
    )
    expect(document.paths['/login'].post.description).toContain('mode=session')
    expect(document.paths['/api/v1/auth/refresh']).toBeUndefined()
  })

  it('when /docs/json is fetched, then each operation asks for exactly the credentials it reads with its scope, and 401 and 403 where it does', async () => {
    const document = (await auth.app.inject({ method: 'GET', url: '/docs/json' })).json()
    const anyCredential = (scope: string) => [
      { bearerAuth: [scope] },
      { apiKeyAuth: [scope] },
      { sessionCookie: [] },
    ]
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(
      ['apiKeyAuth', 'bearerAuth', 'oauth2', 'refreshCookie', 'serviceCredential', 'sessionCookie'].sort(),
    )
    for (const [path, method, scope] of [
      ['/api/v1/users', 'get', 'users:read'],
      ['/api/v1/users/{id}', 'get', 'users:read'],
      ['/api/v1/users/{id}', 'patch', 'users:write'],
      ['/api/v1/users/{id}', 'delete', 'users:write'],
      ['/api/v1/users/{id}/password', 'put', 'users:write'],
      ['/api/v1/api-keys', 'get', 'api-keys:read'],
      ['/api/v1/api-keys', 'post', 'api-keys:write'],
      ['/api/v1/api-keys/{id}', 'delete', 'api-keys:write'],
    ] as const) {
      expect({ path, method, security: document.paths[path][method].security }).toEqual({
        path,
        method,
        security: anyCredential(scope),
      })
      expect(document.paths[path][method].responses).toHaveProperty('401')
      expect(document.paths[path][method].responses).toHaveProperty('403')
    }
    // registration is open; a credential, when sent, lets an admin set role and status
    expect(document.paths['/api/v1/users'].post.security).toEqual([{}, ...anyCredential('users:write')])
    // a key is made with scopes of the catalogue only (what the API fuzzer's key asks for: every one)
    expect(
      document.paths['/api/v1/api-keys'].post.requestBody.content['application/json'].schema.properties.scopes
        .items.enum,
    ).toEqual(apiScopeNames)
    // OpenID Connect's UserInfo: a bearer token, which needs openid when it is limited to scopes
    expect(document.paths['/userinfo'].get.security).toEqual([{ bearerAuth: ['openid'] }])
    expect(document.paths['/api/auth/refresh'].post.security).toEqual([{ refreshCookie: [] }])
    expect(document.paths['/api/auth/refresh'].delete.security).toEqual([{}, { refreshCookie: [] }])
    // signing out needs no body (a cookie session has none to send)
    expect(document.paths['/logout'].post.requestBody.required).toBe(false)
    expect(document.paths['/login'].post.requestBody.required).toBe(true)
    for (const path of ['/login', '/refresh', '/logout', '/.well-known/jwks.json']) {
      for (const operation of Object.values(document.paths[path] ?? {}) as { security?: unknown }[]) {
        expect({ path, security: operation.security }).toEqual({ path, security: undefined })
      }
    }
    // for the other services only: their shared credential, nothing a client holds
    const introspection = document.paths['/internal/api-keys/introspect'].post
    expect(introspection.security).toEqual([{ serviceCredential: [] }])
    expect(introspection.responses).toHaveProperty('401')
  })

  it('when /docs/json is fetched, then list parameters are optional and sort and fields name only the allow-listed fields', async () => {
    const document = (await auth.app.inject({ method: 'GET', url: '/docs/json' })).json()
    const parameters = Object.fromEntries(
      (
        document.paths['/api/v1/users'].get.parameters as {
          name: string
          required: boolean
          schema: { pattern?: string }
        }[]
      ).map((parameter) => [parameter.name, parameter]),
    )
    expect(Object.values(parameters).filter((parameter) => parameter.required)).toEqual([])
    expect(parameters.sort?.schema.pattern).toBe(
      '^(name|email|age|role|status|createdAt|updatedAt):(asc|desc)(,(name|email|age|role|status|createdAt|updatedAt):(asc|desc))*$',
    )
    expect(parameters.fields?.schema.pattern).toBe(
      '^(id|name|email|emailVerified|role|status|age|createdAt|updatedAt)(,(id|name|email|emailVerified|role|status|age|createdAt|updatedAt))*$',
    )
    const keys = document.paths['/api/v1/api-keys'].get.parameters as { name: string; required: boolean }[]
    expect(keys.filter((parameter) => parameter.required)).toEqual([])
  })
})
