// The provider answers as its public address (JWT_ISSUER: the gateway's origin) whatever address reached it: discovery
// names only that origin, a client's X-Forwarded-* cannot make it name another, its cookies are Secure when that
// address is https, and its redirects keep the browser on the origin it came by.
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { createTestUser, TestBrowser } from './oidc-browser.ts'

const publicOrigin = 'https://gateway.example.test'
const spaRedirect = 'http://localhost:5173/callback'

/** Every URL a discovery document holds, at any depth. */
function urlsIn(value: unknown): string[] {
  if (typeof value === 'string') return /^[a-z]+:\/\//i.test(value) ? [value] : []
  if (Array.isArray(value)) return value.flatMap(urlsIn)
  if (value && typeof value === 'object') return Object.values(value).flatMap(urlsIn)
  return []
}

describe('the OpenID provider at its public address', () => {
  let auth: AuthTestApp
  /** auth's own (internal) address, as the gateway reaches it */
  let internal: string

  beforeAll(async () => {
    auth = await buildAuthTestApp({ JWT_ISSUER: publicOrigin, LOGIN_MAX_FAILURES_PER_ADDRESS: '100000' })
    internal = await auth.app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await auth.close()
  })

  it('when discovery is fetched at the internal address, then the issuer and every endpoint are on the public origin', async () => {
    const response = await fetch(`${internal}/.well-known/openid-configuration`)
    expect(response.status).toBe(200)
    const metadata = (await response.json()) as Record<string, unknown>
    expect(metadata.issuer).toBe(publicOrigin)
    expect(metadata).toMatchObject({
      authorization_endpoint: `${publicOrigin}/authorize`,
      token_endpoint: `${publicOrigin}/token`,
      userinfo_endpoint: `${publicOrigin}/userinfo`,
      jwks_uri: `${publicOrigin}/oidc/jwks`,
      revocation_endpoint: `${publicOrigin}/token/revocation`,
      introspection_endpoint: `${publicOrigin}/token/introspection`,
      end_session_endpoint: `${publicOrigin}/session/end`,
      device_authorization_endpoint: `${publicOrigin}/device/auth`,
    })
    const urls = urlsIn(metadata)
    expect(urls.length).toBeGreaterThanOrEqual(9)
    expect(urls.filter((url) => new URL(url).origin !== publicOrigin)).toEqual([])
  })

  it('when a client sends its own X-Forwarded-Host, X-Forwarded-Proto or Forwarded header, then discovery still names only the public origin', async () => {
    const response = await fetch(`${internal}/.well-known/openid-configuration`, {
      headers: {
        'x-forwarded-host': 'evil.example',
        'x-forwarded-proto': 'http',
        forwarded: 'host=evil.example;proto=http',
      },
    })
    const urls = urlsIn(await response.json())
    expect(urls.filter((url) => new URL(url).origin !== publicOrigin)).toEqual([])
  })

  it('when the code flow runs at the internal address, then the provider sets Secure cookies (the public address is https) and redirects within the origin the browser came by', async () => {
    const user = await createTestUser(auth)
    const verifier = client.randomPKCECodeVerifier()
    const url = new URL('/authorize', internal)
    url.search = new URLSearchParams({
      client_id: 'meridian-spa',
      response_type: 'code',
      redirect_uri: spaRedirect,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: client.randomState(),
    }).toString()
    const browser = new TestBrowser(internal)
    const started = await browser.request(url)
    expect(started.status).toBe(303)
    expect(started.headers.get('location')).toMatch(/^\/interaction\/[\w-]+$/)
    const cookies = started.headers.getSetCookie()
    expect(cookies.length).toBeGreaterThan(0)
    expect(cookies.every((cookie) => /;\s*secure/i.test(cookie))).toBe(true)

    // the browser follows every redirect on the internal origin: had one named the public origin, signIn would
    // have stopped there and returned it as the callback
    const { callback, html } = await browser.signIn(url, user)
    expect(html).toBeUndefined()
    expect(callback?.origin).toBe(new URL(spaRedirect).origin)
    expect(callback?.searchParams.get('code')).toEqual(expect.any(String))
    expect(callback?.searchParams.get('iss')).toBe(publicOrigin)
  })
})
