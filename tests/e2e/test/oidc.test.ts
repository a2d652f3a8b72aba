// The OpenID provider through the gateway alone: discovery names only the gateway's origin, and the whole code flow
// with PKCE (authorize, the login and consent pages and their form posts, token, userinfo) runs on the gateway's
// port; its JWT access token is accepted by every service; RFC 7009 revocation and signing out with a refresh token
// work there too.
import { createHash, randomBytes } from 'node:crypto'
import type { TokenPair } from '@meridian/contracts'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { e2eClient } from '../src/client.ts'
import '../src/system-context.ts'

const system = inject('system')
const client = e2eClient(system)
const gateway = new URL(system.gatewayUrl)
/** meridian-spa's redirect URI in the system: the console, on the gateway */
const redirectUri = `${system.gatewayUrl}/console/`
const apiResource = 'urn:meridian:api'

/** Every URL a document holds, at any depth. */
function urlsIn(value: unknown): string[] {
  if (typeof value === 'string') return /^[a-z]+:\/\//i.test(value) ? [value] : []
  if (Array.isArray(value)) return value.flatMap(urlsIn)
  if (value && typeof value === 'object') return Object.values(value).flatMap(urlsIn)
  return []
}

/** A browser that talks to the gateway only: a cookie jar, manual redirects, and every URL it visits recorded. */
class GatewayBrowser {
  readonly visited: URL[] = []
  private readonly cookies = new Map<string, string>()

  async request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url, gateway)
    this.visited.push(target)
    if (target.origin !== gateway.origin) throw new Error(`the flow left the gateway for ${target.href}`)
    const headers = new Headers(init.headers)
    headers.set('accept', 'text/html')
    if (this.cookies.size > 0)
      headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '))
    const response = await fetch(target, {
      ...init,
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';')
      const separator = pair.indexOf('=')
      const value = pair.slice(separator + 1).trim()
      if (value) this.cookies.set(pair.slice(0, separator).trim(), value)
      else this.cookies.delete(pair.slice(0, separator).trim())
    }
    return response
  }

  /** Follows redirects, signs in on the login page and allows on the consent page, until the client's redirect. */
  async authorize(start: URL, user: { email: string; password: string }): Promise<URL> {
    let response = await this.request(start)
    for (let step = 0; step < 20; step += 1) {
      const location = response.headers.get('location')
      if (location) {
        const next = new URL(location, gateway)
        if (next.href.startsWith(redirectUri)) {
          this.visited.push(next)
          return next
        }
        response = await this.request(next)
        continue
      }
      const html = await response.text()
      const action = /action="([^"]+\/(login|confirm))"/.exec(html)
      if (response.status !== 200 || !action?.[1])
        throw new Error(`unexpected page ${response.status}: ${html}`)
      const fields: Record<string, string> =
        action[2] === 'login' ? { email: user.email, password: user.password } : {}
      response = await this.request(action[1], {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      })
    }
    throw new Error('too many steps')
  }
}

const form = (path: string, fields: Record<string, string>) =>
  fetch(`${system.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    signal: AbortSignal.timeout(30_000),
  })

describe('the OpenID provider through the gateway', () => {
  const user = {
    email: `oidc-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}@example.com`,
    password: randomBytes(12).toString('base64url'),
    id: '',
  }

  beforeAll(async () => {
    const registered = await client.request<{ id: string }>('POST', '/api/v1/users', {
      body: { name: 'OIDC Person', email: user.email, password: user.password },
    })
    expect(registered.status).toBe(201)
    user.id = registered.body.id
  })

  it("when discovery is fetched through the gateway, then the issuer and every endpoint are on the gateway's origin", async () => {
    const response = await client.request<Record<string, unknown>>('GET', '/.well-known/openid-configuration')
    expect(response.status).toBe(200)
    expect(response.body.issuer).toBe(system.gatewayUrl)
    expect(response.body).toMatchObject({
      authorization_endpoint: `${system.gatewayUrl}/authorize`,
      token_endpoint: `${system.gatewayUrl}/token`,
      userinfo_endpoint: `${system.gatewayUrl}/userinfo`,
      jwks_uri: `${system.gatewayUrl}/oidc/jwks`,
      revocation_endpoint: `${system.gatewayUrl}/token/revocation`,
      end_session_endpoint: `${system.gatewayUrl}/session/end`,
      device_authorization_endpoint: `${system.gatewayUrl}/device/auth`,
    })
    const elsewhere = urlsIn(response.body).filter((url) => new URL(url).origin !== gateway.origin)
    expect(elsewhere).toEqual([])
    const keys = await client.request<{ keys: unknown[] }>('GET', '/oidc/jwks')
    expect(keys.status).toBe(200)
    expect(keys.body.keys.length).toBeGreaterThan(0)
  })

  it("when the SPA runs the code flow with PKCE on the gateway's port alone, then its token works at /userinfo and every service, and RFC 7009 revokes its refresh token", async () => {
    const verifier = randomBytes(32).toString('base64url')
    const state = randomBytes(16).toString('base64url')
    const start = new URL('/authorize', gateway)
    start.search = new URLSearchParams({
      client_id: 'meridian-spa',
      response_type: 'code',
      redirect_uri: redirectUri,
      // the API scopes the calls below need: a token of the provider acts only within what it was granted
      scope: 'openid profile email offline_access users:read orders:read',
      // OIDC Core 11: offline_access is granted only with an explicit consent prompt
      prompt: 'consent',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      resource: apiResource,
    }).toString()
    const browser = new GatewayBrowser()
    const callback = await browser.authorize(start, user)
    expect(browser.visited.every((url) => url.origin === gateway.origin)).toBe(true)
    expect(browser.visited.some((url) => url.pathname.startsWith('/interaction/'))).toBe(true)
    expect(callback.searchParams.get('state')).toBe(state)
    expect(callback.searchParams.get('iss')).toBe(system.gatewayUrl)

    const exchanged = await form('/token', {
      grant_type: 'authorization_code',
      client_id: 'meridian-spa',
      code: callback.searchParams.get('code') ?? '',
      code_verifier: verifier,
      redirect_uri: redirectUri,
      resource: apiResource,
    })
    expect(exchanged.status).toBe(200)
    const tokens = (await exchanged.json()) as {
      access_token: string
      id_token: string
      refresh_token: string
    }
    const claims = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString())
    expect(claims(tokens.id_token)).toMatchObject({
      iss: system.gatewayUrl,
      sub: user.id,
      aud: 'meridian-spa',
    })
    expect(claims(tokens.access_token)).toMatchObject({
      iss: system.gatewayUrl,
      sub: user.id,
      aud: 'meridian',
    })

    const userinfo = await client.request<{ sub: string; email: string }>('GET', '/userinfo', {
      token: tokens.access_token,
    })
    expect(userinfo.status).toBe(200)
    expect(userinfo.body).toMatchObject({ sub: user.id, email: user.email })
    // the same issuer for every service: auth and order accept the provider's token
    expect(
      (await client.request('GET', `/api/v1/users/${user.id}`, { token: tokens.access_token })).status,
    ).toBe(200)
    const orders = await client.request('GET', `/api/v1/users/${user.id}/orders`, {
      token: tokens.access_token,
    })
    expect(orders.status).toBe(200)
    // and nothing beyond them: placing an order needs orders:write, which the SPA did not ask for
    const placing = await client.request<{ error: { code: string } }>('POST', '/api/v1/orders', {
      token: tokens.access_token,
      body: { customerId: user.id, items: [{ productId: 'any', quantity: 1 }] },
    })
    expect(placing.status).toBe(403)
    expect(placing.body.error.code).toBe('INSUFFICIENT_SCOPE')

    const refreshed = await form('/token', {
      grant_type: 'refresh_token',
      client_id: 'meridian-spa',
      refresh_token: tokens.refresh_token,
    })
    expect(refreshed.status).toBe(200)
    const { refresh_token: rotated } = (await refreshed.json()) as { refresh_token: string }

    const revoked = await form('/token/revocation', {
      token: rotated,
      token_type_hint: 'refresh_token',
      client_id: 'meridian-spa',
    })
    expect(revoked.status).toBe(200)
    const refused = await form('/token', {
      grant_type: 'refresh_token',
      client_id: 'meridian-spa',
      refresh_token: rotated,
    })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' })
  })

  it('when a client of the token pairs signs out with its refresh token through the gateway, then /refresh refuses it', async () => {
    const pair = await client.request<TokenPair>('POST', '/login', {
      body: { email: user.email, password: user.password },
    })
    expect(pair.status).toBe(200)
    const out = await client.request('POST', '/logout', { body: { refreshToken: pair.body.refreshToken } })
    expect(out.status).toBe(204)
    const refused = await client.request('POST', '/refresh', {
      body: { refreshToken: pair.body.refreshToken },
    })
    expect(refused.status).toBe(401)
  })
})
