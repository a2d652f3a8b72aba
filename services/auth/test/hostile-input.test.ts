// Auth against hostile input on every JSON route and text field: absurd nesting and invalid UTF-8 are 400, NUL
// characters are 422 naming the field; never a 500, and nothing is stored.
import { asService, expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor, randomAddress, type SignedIn, signedIn } from './identities.ts'

let auth: AuthTestApp
let root: { authorization: string }
let owner: SignedIn
beforeAll(async () => {
  auth = await buildAuthTestApp()
  root = bearerFor(auth, { role: 'admin' })
  owner = await signedIn(auth)
})
afterAll(async () => {
  await auth?.close()
})

const json = { 'content-type': 'application/json' }

interface JsonOperation {
  method: string
  path: string
}

/** Every documented operation that takes a JSON body, its path parameters filled with an existing user's id. */
async function jsonOperations(): Promise<JsonOperation[]> {
  const document = (await auth.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>>
  }
  const operations: JsonOperation[] = []
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (operation.requestBody?.content?.['application/json'] === undefined) continue
      operations.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, owner.user.id) })
    }
  }
  return operations
}

const send = (operation: JsonOperation, payload: string | Buffer) =>
  auth.app.inject({
    method: operation.method as 'POST',
    url: operation.path,
    // an admin's token and the service credential (/internal/): authentication passes, so the body is what is judged
    headers: { ...json, ...root, ...asService() },
    payload,
    remoteAddress: randomAddress(),
  })

describe('auth: hostile bodies on every JSON route', () => {
  it('when the document is read, then the JSON routes include login, refresh, users and API keys', async () => {
    const paths = (await jsonOperations()).map((operation) => `${operation.method} ${operation.path}`)
    expect(paths).toEqual(
      expect.arrayContaining([
        'POST /login',
        'POST /refresh',
        'POST /api/v1/users',
        `PATCH /api/v1/users/${owner.user.id}`,
        'POST /api/v1/api-keys',
      ]),
    )
  })

  for (const levels of [10_000, 100_000]) {
    it(`when a body is nested ${levels} levels deep, then every JSON route answers 400 BAD_REQUEST in the envelope`, async () => {
      const body = `${'['.repeat(levels)}${']'.repeat(levels)}`
      const objects = `${'{"name":'.repeat(levels)}1${'}'.repeat(levels)}`
      for (const operation of await jsonOperations()) {
        for (const payload of [body, objects]) {
          const context = `${operation.method} ${operation.path}`
          const error = expectErrorEnvelope(await send(operation, payload), 400, 'BAD_REQUEST', { context })
          expect(error.message, context).toBe('JSON nested deeper than 64 levels')
        }
      }
    })
  }

  it('when a body is not valid UTF-8, then every JSON route answers 400 BAD_REQUEST', async () => {
    const payload = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])
    for (const operation of await jsonOperations()) {
      const context = `${operation.method} ${operation.path}`
      const error = expectErrorEnvelope(await send(operation, payload), 400, 'BAD_REQUEST', { context })
      expect(error.message, context).toBe('Request body is not valid UTF-8')
    }
  })
})

describe('auth: NUL and invalid UTF-8 in every text field', () => {
  const nul = 'a\u0000b'
  const nulCases: {
    name: string
    method: 'POST' | 'PATCH' | 'GET'
    url: () => string
    body?: object
    field: string
    headers?: () => Record<string, string>
  }[] = [
    {
      name: 'registration name (no credentials)',
      method: 'POST',
      url: () => '/api/v1/users',
      body: { name: nul, email: 'nul@example.com', password: 'long enough' },
      field: 'name',
    },
    {
      name: 'registration password',
      method: 'POST',
      url: () => '/api/v1/users',
      body: { name: 'N', email: 'nul2@example.com', password: `long ${nul} enough` },
      field: 'password',
    },
    {
      name: 'PATCH name',
      method: 'PATCH',
      url: () => `/api/v1/users/${owner.user.id}`,
      body: { name: nul },
      field: 'name',
      headers: () => owner.headers,
    },
    {
      name: 'API-key name',
      method: 'POST',
      url: () => '/api/v1/api-keys',
      body: { name: nul, scopes: ['users:read'] },
      field: 'name',
      headers: () => owner.headers,
    },
    {
      name: 'login email',
      method: 'POST',
      url: () => '/login',
      body: { email: `x${nul}@example.com`, password: 'whatever' },
      field: 'email',
    },
    {
      name: 'login password',
      method: 'POST',
      url: () => '/login',
      body: { email: 'x@example.com', password: nul },
      field: 'password',
    },
    { name: 'users q', method: 'GET', url: () => '/api/v1/users?q=a%00b', field: 'q', headers: () => root },
  ]

  for (const testCase of nulCases) {
    it(`when the ${testCase.name} holds a NUL character, then 422 VALIDATION_ERROR names ${testCase.field}, and nothing changes`, async () => {
      const before = await auth.sql`select count(*)::int as users, max(updated_at) as changed from users`
      const response = await auth.app.inject({
        method: testCase.method,
        url: testCase.url(),
        headers: { ...(testCase.body ? json : {}), ...(testCase.headers?.() ?? {}) },
        ...(testCase.body ? { payload: JSON.stringify(testCase.body) } : {}),
        remoteAddress: randomAddress(),
      })
      const { details = [] } = expectErrorEnvelope(response, 422, 'VALIDATION_ERROR')
      expect(details.map((detail) => detail.field)).toContain(testCase.field)
      expect(await auth.sql`select count(*)::int as users, max(updated_at) as changed from users`).toEqual(
        before,
      )
    })
  }

  it('when a text field reaches the database with a NUL anyway (the introspected key), then it is refused without a 500', async () => {
    const response = await auth.app.inject({
      method: 'POST',
      url: '/internal/api-keys/introspect',
      headers: { ...json, ...asService() },
      payload: JSON.stringify({ key: `mk_${nul}` }),
    })
    expect(response.statusCode).toBeLessThan(500)
  })
})
