// API scopes at auth, from its OpenAPI document: every operation that takes a credential lists a scope; an API key
// (auth's own, from its database) or an access token of the OpenID provider lacking it is refused on every such
// operation with 403 INSUFFICIENT_SCOPE naming it, and nothing stored changes; with it, the scope check passes.
import { randomUUID } from 'node:crypto'
import { isApiScope } from '@meridian/contracts'
import {
  accessToken,
  expectInputsBounded,
  expectScopesDeclared,
  expectScopesPass,
  expectScopesRefused,
  storedStateDigest,
  tokenEnv,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { type SignedIn, signedIn } from './identities.ts'

let auth: AuthTestApp
let admin: SignedIn
beforeAll(async () => {
  auth = await buildAuthTestApp(tokenEnv)
  admin = await signedIn(auth, { role: 'admin' })
})
afterAll(async () => {
  await auth?.close()
})

/**
 * An admin's key limited to `scopes`, made through the API (only the scope can refuse it); OpenID Connect's scopes,
 * which the document's catalogue also lists, are not a key's.
 */
async function adminKey(scopes: readonly string[]): Promise<Record<string, string>> {
  const created = await auth.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: admin.headers,
    payload: { name: 'scope sweep', scopes: scopes.filter(isApiScope) },
  })
  expect(created.statusCode).toBe(201)
  return { 'x-api-key': created.json().key }
}

/** An admin's access token as the OpenID provider issues it, limited to `scopes`. */
const providerToken = (scopes: readonly string[]) => ({
  authorization: `Bearer ${accessToken('admin', admin.user.id, { scopes })}`,
})

/**
 * What auth stores. The keys the sweep uses are made before it compares (their first use is recorded too, once a
 * minute), so that only what the refused requests could change is compared.
 */
const storedState = () =>
  // security_mails by its rows alone: the mail sender's rounds update a mail asked for earlier (its attempts, sent or
  // dead) whenever they run, which a sweep on a slow machine met between its two digests (CI run W2)
  storedStateDigest(auth.sql, { idsOnly: ['security_mails'] })

describe('auth: API scopes', () => {
  it('when the OpenAPI document is read, then every operation that takes a credential lists a scope of the catalogue', async () => {
    const operations = await expectScopesDeclared(auth.app)
    expect(operations.map((operation) => `${operation.method} ${operation.path}`)).toEqual(
      expect.arrayContaining(['PATCH /api/v1/users/{id}', 'GET /userinfo', 'POST /api/v1/api-keys']),
    )
  })

  // auth runs its own suite (its keys are its own): the case every other service gets from describeServiceScopes
  it('when the OpenAPI document is read, then every input a client can send is bounded', async () => {
    expect(await expectInputsBounded(auth.app)).toBeGreaterThan(0)
  })

  it("when an API key lacks an operation's scope, then every such operation answers 403 INSUFFICIENT_SCOPE naming it, and nothing else stored changes", async () => {
    // the keys are made first: the state compared is what the refused requests could have changed
    const keys = new Map<string, Record<string, string>>()
    const prepared = async (scopes: readonly string[]) => {
      const name = [...scopes].sort().join(' ')
      if (!keys.has(name)) keys.set(name, await adminKey(scopes))
      return keys.get(name)!
    }
    await expectScopesRefused(auth.app, { scheme: 'apiKeyAuth', credential: prepared })
    const swept = await expectScopesRefused(auth.app, {
      scheme: 'apiKeyAuth',
      credential: prepared,
      state: storedState,
    })
    expect(swept).toBeGreaterThanOrEqual(8)
  })

  it("when an API key holds only an operation's scope, then it passes the scope check on every operation", async () => {
    await expectScopesPass(auth.app, { scheme: 'apiKeyAuth', credential: adminKey })
  })

  it("when an access token of the OpenID provider lacks an operation's scope, then 403 INSUFFICIENT_SCOPE naming it; with it, the check passes", async () => {
    const swept = await expectScopesRefused(auth.app, {
      scheme: 'bearerAuth',
      credential: providerToken,
      state: storedState,
    })
    expect(swept).toBeGreaterThanOrEqual(8)
    await expectScopesPass(auth.app, { scheme: 'bearerAuth', credential: providerToken })
  })

  it('when a first-party token (POST /login) reads a user, then no scope is asked of it', async () => {
    const read = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${randomUUID()}`,
      headers: admin.headers,
    })
    expect(read.statusCode).toBe(404)
  })

  it('when a token limited to openid api-keys:write asks for a key with scopes it lacks, then 403 INSUFFICIENT_SCOPE naming the first and no key is made; within its scopes the key is made', async () => {
    const customer = await signedIn(auth)
    const narrow = {
      authorization: `Bearer ${accessToken('user', customer.user.id, { scopes: ['openid', 'api-keys:write'] })}`,
    }
    const create = (scopes: string[]) =>
      auth.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: narrow,
        payload: { name: 'wider than its maker', scopes },
      })
    const before = await storedState()
    const wide = await create(['orders:read', 'orders:write', 'api-keys:read'])
    expect(wide.statusCode).toBe(403)
    expect(wide.json().error).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      message: 'Insufficient scope: this operation needs orders:read',
    })
    // one scope beyond the token's among those it holds is refused too
    expect((await create(['api-keys:write', 'api-keys:read'])).statusCode).toBe(403)
    expect(await storedState()).toEqual(before)
    const within = await create(['api-keys:write'])
    expect(within.statusCode).toBe(201)
    expect(within.json().scopes).toEqual(['api-keys:write'])
  })
})
