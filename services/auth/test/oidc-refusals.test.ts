// What the OpenID provider refuses: PKCE misuse, redirect URIs that are not an exact match, code reuse, implicit and
// password grants, unknown clients, and interaction forms posted from another browser.

import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAuthConfig } from '../src/config.ts'
import { assertOidcSecretsConfigured } from '../src/oidc/oidc-plugin.ts'
import {
  createTestUser,
  type OidcTestApp,
  signInWithPkce,
  startOidcTestApp,
  TestBrowser,
  type TestUser,
} from './oidc-browser.ts'

const spaRedirect = 'http://localhost:5173/callback'
const webSecret = 'insecure-development-meridian-web-secret'
const insecure = { execute: [client.allowInsecureRequests] }
const json = { accept: 'application/json' }
/** a well-formed S256 challenge (43 base64url characters) */
const someChallenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

describe('OpenID provider refusals', () => {
  let auth: OidcTestApp
  let user: TestUser
  let spa: client.Configuration

  beforeAll(async () => {
    auth = await startOidcTestApp()
    user = await createTestUser(auth)
    spa = await client.discovery(new URL(auth.issuer), 'meridian-spa', undefined, client.None(), insecure)
  })
  afterAll(async () => {
    await auth.close()
  })

  const authorizeUrl = (parameters: Record<string, string>): URL => {
    const url = new URL('/authorize', auth.issuer)
    for (const [name, value] of Object.entries({
      client_id: 'meridian-spa',
      response_type: 'code',
      redirect_uri: spaRedirect,
      scope: 'openid',
      state: 'the-state',
      code_challenge: someChallenge,
      code_challenge_method: 'S256',
      ...parameters,
    })) {
      if (value !== '') url.searchParams.set(name, value)
    }
    return url
  }

  /** An authorization error sent back to the (verified) redirect URI: error and state in the query. */
  async function redirectedError(url: URL): Promise<URLSearchParams> {
    const response = await fetch(url, { redirect: 'manual', headers: json })
    expect(response.status).toBe(303)
    const location = new URL(response.headers.get('location') ?? '')
    expect(location.origin + location.pathname).toBe(spaRedirect)
    return location.searchParams
  }

  const codeFlow = () =>
    signInWithPkce(auth.issuer, spa, user, { redirect_uri: spaRedirect, scope: 'openid profile' })

  it('when the code is exchanged with a wrong code_verifier, then the token endpoint answers invalid_grant', async () => {
    const { callback, state } = await codeFlow()
    await expect(
      client.authorizationCodeGrant(spa, callback, {
        pkceCodeVerifier: client.randomPKCECodeVerifier(),
        expectedState: state,
      }),
    ).rejects.toMatchObject({ error: 'invalid_grant', status: 400 })
  })

  it('when code_challenge_method=plain is asked, then the client gets invalid_request with its state', async () => {
    const error = await redirectedError(authorizeUrl({ code_challenge_method: 'plain' }))
    expect(error.get('error')).toBe('invalid_request')
    expect(error.get('state')).toBe('the-state')
    expect(error.get('code')).toBeNull()
  })

  it('when the public client sends no code_challenge, then the client gets invalid_request', async () => {
    const error = await redirectedError(authorizeUrl({ code_challenge: '', code_challenge_method: '' }))
    expect(error.get('error')).toBe('invalid_request')
    expect(error.get('error_description')).toMatch(/PKCE/)
  })

  it.each([
    ['a trailing slash', `${spaRedirect}/`],
    ['an extra query', `${spaRedirect}?next=/admin`],
    ['another host', 'http://evil.example/callback'],
  ])(
    'when redirect_uri differs from the registered one by %s, then nothing is redirected and an invalid_redirect_uri page is shown',
    async (_case, redirectUri) => {
      const response = await fetch(authorizeUrl({ redirect_uri: redirectUri }), { redirect: 'manual' })
      expect(response.status).toBe(400)
      expect(response.headers.get('location')).toBeNull()
      // the authorization endpoint is a browser endpoint: its errors are pages when it cannot redirect
      expect(response.headers.get('content-type')).toContain('text/html')
      expect(await response.text()).toContain('invalid_redirect_uri')
    },
  )

  it('when a code is exchanged twice, then the second exchange fails and the tokens of the first are revoked', async () => {
    const { callback, verifier, state } = await codeFlow()
    const first = await client.authorizationCodeGrant(spa, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    const before = await fetch(`${auth.issuer}/userinfo`, {
      headers: { authorization: `Bearer ${first.access_token}` },
    })
    expect(before.status).toBe(200)

    await expect(
      client.authorizationCodeGrant(spa, callback, { pkceCodeVerifier: verifier, expectedState: state }),
    ).rejects.toMatchObject({ error: 'invalid_grant' })

    const after = await fetch(`${auth.issuer}/userinfo`, {
      headers: { authorization: `Bearer ${first.access_token}` },
    })
    expect(after.status).toBe(401)
    expect(after.headers.get('www-authenticate')).toContain('invalid_token')
  })

  it.each(['token', 'id_token token', 'id_token', 'code id_token'])(
    'when response_type=%s (implicit or hybrid) is asked, then the client gets unsupported_response_type and no token',
    async (responseType) => {
      const response = await fetch(authorizeUrl({ response_type: responseType, nonce: 'n-1' }), {
        redirect: 'manual',
      })
      expect(response.status).toBe(303)
      const location = new URL(response.headers.get('location') ?? '')
      expect(location.origin + location.pathname).toBe(spaRedirect)
      // an implicit response type answers in the fragment, the code flow in the query: accept either
      const answer = new URLSearchParams(location.hash.slice(1) || location.search)
      expect(answer.get('error')).toBe('unsupported_response_type')
      expect(answer.get('state')).toBe('the-state')
      expect(answer.get('access_token')).toBeNull()
      expect(answer.get('id_token')).toBeNull()
      expect(answer.get('code')).toBeNull()
    },
  )

  it('when the password grant is used, then the token endpoint answers unsupported_grant_type', async () => {
    const response = await fetch(`${auth.issuer}/token`, {
      method: 'POST',
      headers: {
        ...json,
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`meridian-web:${webSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'password',
        username: user.email,
        password: user.password,
      }).toString(),
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: 'unsupported_grant_type' })
  })

  it('when an unknown client starts an authorization, then it is refused without a redirect', async () => {
    const response = await fetch(authorizeUrl({ client_id: 'not-a-client' }), { redirect: 'manual' })
    expect(response.status).toBe(400)
    expect(response.headers.get('location')).toBeNull()
    expect(await response.text()).toContain('invalid_client')
  })

  it('when an unknown client calls the token endpoint, then it gets 401 invalid_client', async () => {
    const response = await fetch(`${auth.issuer}/token`, {
      method: 'POST',
      headers: {
        ...json,
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('not-a-client:whatever-secret').toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
    })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ error: 'invalid_client' })
  })

  it('when the public SPA asks for client_credentials, then it is refused', async () => {
    const response = await fetch(`${auth.issuer}/token`, {
      method: 'POST',
      headers: { ...json, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'meridian-spa' }).toString(),
    })
    expect(response.status).toBe(400)
    // oidc-provider answers invalid_request (RFC 6749 would say unauthorized_client); refused either way
    expect(await response.json()).toMatchObject({
      error: 'invalid_request',
      error_description: 'requested grant type is not allowed for this client',
    })
  })

  it('when the password is wrong, then the login page is shown again with 401, the email escaped, and no redirect', async () => {
    const browser = new TestBrowser(auth.issuer)
    const start = await browser.request(authorizeUrl({}))
    const interaction = new URL(start.headers.get('location') ?? '', auth.issuer)
    expect(interaction.pathname).toMatch(/^\/interaction\//)
    await browser.request(interaction)
    const hostile = '"><script>alert(1)</script>'
    const response = await browser.postForm(`${interaction.pathname}/login`, {
      email: hostile,
      password: 'wrong',
    })
    expect(response.status).toBe(401)
    expect(response.headers.get('location')).toBeNull()
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    const html = await response.text()
    expect(html).toContain('Invalid email or password')
    expect(html).not.toContain('<script>')
    expect(html).toContain('&quot;&gt;&lt;script&gt;')
  })

  it('when an account has used up its failed logins, then even the right password gets 429 on the login form', async () => {
    const target = await createTestUser(auth)
    const browser = new TestBrowser(auth.issuer)
    const start = await browser.request(authorizeUrl({}))
    const interaction = new URL(start.headers.get('location') ?? '', auth.issuer)
    await browser.request(interaction)
    // LOGIN_MAX_FAILURES_PER_ACCOUNT (5), counted together with POST /login
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const failed = await browser.postForm(`${interaction.pathname}/login`, {
        email: target.email.toUpperCase(),
        password: 'wrong',
      })
      expect(failed.status).toBe(401)
    }
    const blocked = await browser.postForm(`${interaction.pathname}/login`, {
      email: target.email,
      password: target.password,
    })
    expect(blocked.status).toBe(429)
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await blocked.text()).toContain('Too many failed sign-in attempts')
  })

  it('when a suspended user signs in with the right password, then the login is refused', async () => {
    const suspended = await createTestUser(auth, { status: 'suspended' })
    const url = authorizeUrl({})
    const { callback, page } = await new TestBrowser(auth.issuer).signIn(url, suspended)
    expect(callback).toBeUndefined()
    expect(page?.status).toBe(401)
  })

  it('when an invited user (no password yet) posts the login form, then the same 401 as a wrong password', async () => {
    const email = `invited.${Date.now()}@example.com`
    await auth.sql`
      insert into users (name, email, password_hash, status) values ('Invited', ${email}, null, 'invited')`
    const { callback, page, html } = await new TestBrowser(auth.issuer).signIn(authorizeUrl({}), {
      email,
      password: 'any password at all',
    })
    expect(callback).toBeUndefined()
    expect(page?.status).toBe(401)
    expect(html).toContain('Invalid email or password')
  })

  it('when the login form is posted from another browser (no interaction cookie), then it is refused', async () => {
    const victim = new TestBrowser(auth.issuer)
    const start = await victim.request(authorizeUrl({}))
    const interaction = new URL(start.headers.get('location') ?? '', auth.issuer)

    const attacker = new TestBrowser(auth.issuer)
    const response = await attacker.postForm(`${interaction.pathname}/login`, {
      email: user.email,
      password: user.password,
    })
    expect(response.status).toBe(400)
    expect(response.headers.get('location')).toBeNull()
  })

  it('when the interaction page is requested with GET for the login action, then only POST is accepted', async () => {
    const response = await fetch(`${auth.issuer}/interaction/some-uid/login`, { headers: json })
    expect(response.status).toBe(405)
  })

  it('when the user denies consent, then the client gets access_denied with its state and no code', async () => {
    const browser = new TestBrowser(auth.issuer)
    const start = await browser.request(authorizeUrl({ scope: 'openid email' }))
    const login = new URL(start.headers.get('location') ?? '', auth.issuer)
    await browser.request(login)
    let response = await browser.postForm(`${login.pathname}/login`, {
      email: user.email,
      password: user.password,
    })
    // back through the provider to the consent step
    while (new URL(response.headers.get('location') ?? '/', auth.issuer).pathname.startsWith('/authorize/')) {
      response = await browser.request(response.headers.get('location') ?? '')
    }
    const consent = new URL(response.headers.get('location') ?? '', auth.issuer)
    expect(await (await browser.request(consent)).text()).toContain('Allow access?')
    const denied = await browser.postForm(`${consent.pathname}/abort`, {})
    const { callback } = await browser.signIn(
      new URL(denied.headers.get('location') ?? '', auth.issuer),
      user,
    )
    expect(callback?.searchParams.get('error')).toBe('access_denied')
    expect(callback?.searchParams.get('state')).toBe('the-state')
    expect(callback?.searchParams.get('code')).toBeNull()
  })
})

describe('OpenID provider secrets', () => {
  it('when a cookie key is shorter than 32 characters, then the plugin refuses to start in any environment', () => {
    const config = loadAuthConfig({ NODE_ENV: 'test', OIDC_COOKIE_KEYS: `${'a'.repeat(40)},short` })
    expect(() => assertOidcSecretsConfigured(config)).toThrow(/OIDC_COOKIE_KEYS: every comma-separated key/)
  })

  it('when every cookie key is long enough, then the plugin accepts the configuration', () => {
    const config = loadAuthConfig({
      NODE_ENV: 'test',
      OIDC_COOKIE_KEYS: `${'a'.repeat(40)},${'b'.repeat(40)}`,
    })
    expect(() => assertOidcSecretsConfigured(config)).not.toThrow()
  })
})
