// Ending the OpenID provider's grants: RFC 7009 revocation by the client, and a password change, suspension or
// deletion of the user, each refuse a refresh token obtained by the real code flow at /token, and the provider's SSO
// session no longer skips the login.
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearerFor } from './identities.ts'
import {
  createTestUser,
  type OidcTestApp,
  startOidcTestApp,
  TestBrowser,
  type TestUser,
} from './oidc-browser.ts'

const spaRedirect = 'http://localhost:5173/callback'
const webRedirect = 'http://localhost:3000/callback'
const webSecret = 'insecure-development-meridian-web-secret'
const insecure = { execute: [client.allowInsecureRequests] }
const json = { 'content-type': 'application/json' }

describe('ending the OpenID provider grants', () => {
  let auth: OidcTestApp
  let spa: client.Configuration
  let web: client.Configuration
  let admin: { authorization: string }

  beforeAll(async () => {
    auth = await startOidcTestApp()
    spa = await client.discovery(new URL(auth.issuer), 'meridian-spa', undefined, client.None(), insecure)
    web = await client.discovery(
      new URL(auth.issuer),
      'meridian-web',
      undefined,
      client.ClientSecretBasic(webSecret),
      insecure,
    )
    admin = bearerFor(auth, { role: 'admin' })
  })
  afterAll(async () => {
    await auth.close()
  })

  const clients = { spa: { redirect: spaRedirect }, web: { redirect: webRedirect } }

  /** The authorization request of `configuration` for offline access (a refresh token), with PKCE and state. */
  async function authorizationRequest(kind: keyof typeof clients) {
    const configuration = kind === 'spa' ? spa : web
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: clients[kind].redirect,
      scope: 'openid email offline_access',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      // OIDC Core 11: offline_access is granted only with an explicit consent prompt
      prompt: 'consent',
    })
    return { configuration, url, verifier, state }
  }

  /** The code flow in a browser of its own: the tokens (with a refresh token) and the browser, signed in. */
  async function signInOffline(kind: keyof typeof clients, user: TestUser) {
    const browser = new TestBrowser(auth.issuer)
    const { configuration, url, verifier, state } = await authorizationRequest(kind)
    const { callback, html } = await browser.signIn(url, user)
    if (!callback) throw new Error(`the flow did not come back to the client: ${html}`)
    const tokens = await client.authorizationCodeGrant(configuration, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    if (!tokens.refresh_token) throw new Error('no refresh token')
    return { tokens, browser, configuration, refreshToken: tokens.refresh_token }
  }

  /** Where a new authorization request of this browser lands: straight back to the client, or a page. */
  async function whereAuthorizeLands(browser: TestBrowser): Promise<'client' | 'login' | 'consent'> {
    const { url } = await authorizationRequest('web')
    const requested = new URL(url)
    // no consent prompt asked for this time: only what the provider's session and grant decide
    requested.searchParams.delete('prompt')
    requested.searchParams.set('scope', 'openid email')
    let response = await browser.request(requested)
    for (let step = 0; step < 10; step += 1) {
      const location = response.headers.get('location')
      if (!location) break
      const next = new URL(location, auth.issuer)
      if (next.origin !== new URL(auth.issuer).origin) return 'client'
      response = await browser.request(next)
    }
    const html = await response.text()
    if (/action="\/interaction\/[^"]+\/login"/.test(html)) return 'login'
    if (/action="\/interaction\/[^"]+\/confirm"/.test(html)) return 'consent'
    throw new Error(`the authorization landed on an unknown page: ${response.status} ${html}`)
  }

  const refusedAtToken = async (configuration: client.Configuration, refreshToken: string) => {
    await expect(client.refreshTokenGrant(configuration, refreshToken)).rejects.toMatchObject({
      error: 'invalid_grant',
    })
  }
  const providerRowsOf = async (userId: string) =>
    (
      await auth.sql<{ model: string }[]>`
        select model from oidc_payloads where account_id = ${userId} order by model`
    ).map((row) => row.model)

  it('when the SSO session exists, then a new authorization skips the login (what the next tests take away)', async () => {
    const user = await createTestUser(auth)
    const { browser } = await signInOffline('web', user)
    expect(await whereAuthorizeLands(browser)).toBe('client')
    expect(await providerRowsOf(user.id)).toEqual(
      expect.arrayContaining(['AccessToken', 'Grant', 'RefreshToken', 'Session']),
    )
  })

  it("when the user's password is changed, then the provider's refresh token is refused at /token, its access token at /userinfo, and its session no longer skips the login", async () => {
    const user = await createTestUser(auth)
    const { tokens, browser, configuration, refreshToken } = await signInOffline('web', user)
    const changed = await auth.app.inject({
      method: 'PUT',
      url: `/api/v1/users/${user.id}/password`,
      headers: { ...admin, ...json },
      payload: { newPassword: 'a brand new passphrase' },
    })
    expect(changed.statusCode).toBe(204)

    await refusedAtToken(configuration, refreshToken)
    const userinfo = await fetch(`${auth.issuer}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(userinfo.status).toBe(401)
    expect(await providerRowsOf(user.id)).toEqual([])
    expect(await whereAuthorizeLands(browser)).toBe('login')
    // the new password signs in again and gets a refresh token that works
    const again = await signInOffline('web', { ...user, password: 'a brand new passphrase' })
    expect((await client.refreshTokenGrant(configuration, again.refreshToken)).access_token).toEqual(
      expect.any(String),
    )
  })

  it("when the user is suspended, then the provider's refresh token is refused and its session no longer skips the login", async () => {
    const user = await createTestUser(auth)
    const { browser, configuration, refreshToken } = await signInOffline('spa', user)
    const suspended = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: { ...admin, ...json },
      payload: { status: 'suspended' },
    })
    expect(suspended.statusCode).toBe(200)

    await refusedAtToken(configuration, refreshToken)
    expect(await providerRowsOf(user.id)).toEqual([])
    expect(await whereAuthorizeLands(browser)).toBe('login')
  })

  it("when the user is deleted, then the provider's refresh token is refused and nothing of theirs is left in the provider", async () => {
    const user = await createTestUser(auth)
    const { browser, configuration, refreshToken } = await signInOffline('web', user)
    const removed = await auth.app.inject({
      method: 'DELETE',
      url: `/api/v1/users/${user.id}`,
      headers: admin,
    })
    expect(removed.statusCode).toBe(204)

    await refusedAtToken(configuration, refreshToken)
    expect(await providerRowsOf(user.id)).toEqual([])
    expect(await whereAuthorizeLands(browser)).toBe('login')
  })

  it("when someone else's rights change (a bystander), then their provider grants are untouched", async () => {
    const user = await createTestUser(auth)
    const bystander = await createTestUser(auth)
    const kept = await signInOffline('web', bystander)
    await signInOffline('web', user)
    const removed = await auth.app.inject({
      method: 'DELETE',
      url: `/api/v1/users/${user.id}`,
      headers: admin,
    })
    expect(removed.statusCode).toBe(204)
    const refreshed = await client.refreshTokenGrant(kept.configuration, kept.refreshToken)
    expect(refreshed.refresh_token).toEqual(expect.any(String))
  })

  describe('RFC 7009 revocation (/token/revocation)', () => {
    const revocation = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${auth.issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(body).toString(),
      })
    const basic = (id: string, secret: string) => ({
      authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
    })

    it('when the confidential client revokes its refresh token with its secret, then 200 and /token refuses it', async () => {
      const { refreshToken, configuration } = await signInOffline('web', await createTestUser(auth))
      const answer = await revocation(
        { token: refreshToken, token_type_hint: 'refresh_token' },
        basic('meridian-web', webSecret),
      )
      expect(answer.status).toBe(200)
      expect(await answer.text()).toBe('')
      await refusedAtToken(configuration, refreshToken)
    })

    it('when the public SPA revokes its refresh token with its client_id, then 200 and /token refuses it', async () => {
      const { refreshToken, configuration } = await signInOffline('spa', await createTestUser(auth))
      const answer = await revocation({ token: refreshToken, client_id: 'meridian-spa' })
      expect(answer.status).toBe(200)
      await refusedAtToken(configuration, refreshToken)
    })

    it('when the token is unknown or already revoked, then 200 as well (nothing revealed)', async () => {
      const { refreshToken } = await signInOffline('spa', await createTestUser(auth))
      for (const token of [refreshToken, refreshToken, 'no-such-token-at-all-0123456789abcdef']) {
        const answer = await revocation({ token, client_id: 'meridian-spa' })
        expect(answer.status).toBe(200)
      }
    })

    it("when a client revokes another client's token, or presents a wrong secret, then that token keeps working", async () => {
      const { refreshToken, configuration } = await signInOffline('web', await createTestUser(auth))
      // RFC 7009 2.1: a client may revoke only its own tokens (the provider says so, and revokes nothing)
      const foreign = await revocation({ token: refreshToken, client_id: 'meridian-spa' })
      expect(foreign.status).toBe(400)
      expect(await foreign.json()).toMatchObject({ error: 'invalid_request' })
      const wrongSecret = await revocation({ token: refreshToken }, basic('meridian-web', 'x'.repeat(40)))
      expect(wrongSecret.status).toBe(401)
      expect(await wrongSecret.json()).toMatchObject({ error: 'invalid_client' })
      const refreshed = await client.refreshTokenGrant(configuration, refreshToken)
      expect(refreshed.access_token).toEqual(expect.any(String))
    })

    it('when a revocation request has no token, then 400 invalid_request and nothing changes', async () => {
      const answer = await revocation({ client_id: 'meridian-spa' })
      expect(answer.status).toBe(400)
      expect(await answer.json()).toMatchObject({ error: 'invalid_request' })
    })
  })
})
