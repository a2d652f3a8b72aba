// What API fuzzing found, fixed at its cause: auth answers as its document says. Integers past the page bound (or
// coerced to Infinity) are refused naming the parameter before any SQL, sort keys and field names outside the
// allow-lists are refused by validation, a name that trims to nothing is refused naming it (not by a database
// constraint), and JSON bodies are not coerced into the documented types.
import { randomUUID } from 'node:crypto'
import { asService, expectErrorEnvelope, type HttpAnswer } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor } from './identities.ts'

const json = { 'content-type': 'application/json' }

describe('auth: answers as documented', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp()
  })
  afterAll(async () => {
    await auth.close()
  })

  const admin = () => bearerFor(auth, { role: 'admin' })
  const details = (response: HttpAnswer) =>
    expectErrorEnvelope(response, 422, 'VALIDATION_ERROR').details ?? []

  it('when page is 1e400 (Infinity once read) or past the last servable page, then 422 names page, for users and API keys', async () => {
    for (const url of ['/api/v1/users?page=1e400', '/api/v1/api-keys?page=1e400']) {
      expect(details(await auth.app.inject({ method: 'GET', url, headers: admin() }))).toEqual([
        { field: 'page', message: 'must be a finite number', received: 'Infinity' },
      ])
    }
    const past = details(
      await auth.app.inject({ method: 'GET', url: '/api/v1/users?page=10000001', headers: admin() }),
    )
    expect(past).toEqual([expect.objectContaining({ field: 'page', received: '10000001' })])
  })

  it('when sort or fields name something outside the allow-lists, then validation refuses them, naming the parameter', async () => {
    const response = await auth.app.inject({
      method: 'GET',
      url: '/api/v1/users?sort=password_hash:asc&fields=id,passwordHash',
      headers: admin(),
    })
    expect(details(response).map(({ field, received }) => ({ field, received }))).toEqual([
      { field: 'sort', received: 'password_hash:asc' },
      { field: 'fields', received: 'id,passwordHash' },
    ])
  })

  it('when a name is only white space, then 422 names the name field (it would be stored trimmed, as nothing)', async () => {
    const response = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: json,
      payload: {
        name: '\r\u00a0',
        email: `blank.${randomUUID().slice(0, 8)}@example.com`,
        password: 'analytical engine',
      },
    })
    expect(details(response)).toEqual([
      expect.objectContaining({
        field: 'name',
        message: 'must contain a character other than white space, and no NUL characters',
      }),
    ])
  })

  it('when a JSON body sends a number where a string is documented, then 422 names it instead of reading it as text', async () => {
    const response = await auth.app.inject({
      method: 'POST',
      url: '/internal/api-keys/introspect',
      headers: { ...json, ...asService() },
      payload: { key: 123 },
    })
    // (a key's value is never echoed)
    expect(details(response)).toEqual([{ field: 'key', message: 'must be string' }])
  })
})
