// The OpenAPI document generated from the route schemas is valid OpenAPI 3.1 and describes the users resource.
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
    for (const path of ['/login', '/refresh', '/logout', '/api/auth/refresh']) {
      expect(Object.keys(document.paths[path] ?? {})).toEqual(['post'])
    }
    expect(Object.keys(document.paths['/.well-known/jwks.json'] ?? {})).toEqual(['get'])
    expect(Object.keys(document.paths['/login'].post.responses).sort()).toEqual(
      ['200', '204', '400', '401', '413', '415', '422', '429'].sort(),
    )
    expect(document.paths['/login'].post.description).toContain('mode=session')
    expect(document.paths['/api/v1/auth/refresh']).toBeUndefined()
  })
})
