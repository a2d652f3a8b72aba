// OAuth 2.0 / OpenID Connect grants end to end, with openid-client as the relying party and fetch as the browser.
import { expectErrorEnvelope } from '@meridian/testkit'
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresAdapter, deleteExpiredPayloads } from '../src/data/oidc-payloads.ts'
import { meridianApiResource } from '../src/oidc/provider.ts'
import {
  createTestUser,
  type OidcTestApp,
  signInWithPkce,
  startOidcTestApp,
  TestBrowser,
  type TestUser,
} from './oidc-browser.ts'

const spaRedirect = 'http://localhost:5173/callback'
const webRedirect = 'http://localhost:3000/callback'
const webSecret = 'insecure-development-meridian-web-secret'
const machineSecret = 'insecure-development-meridian-machine-secret'
const insecure = { execute: [client.allowInsecureRequests] }

describe('OpenID Connect grants', () => {
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

  const authorize = (configuration: client.Configuration, parameters: Record<string, string>) =>
    signInWithPkce(auth.issuer, configuration, user, parameters)

  it('when the discovery document is fetched, then it names the issuer, the root endpoints and only the code flow with S256', async () => {
    const metadata = spa.serverMetadata()
    expect(metadata.issuer).toBe(auth.issuer)
    expect(metadata.authorization_endpoint).toBe(`${auth.issuer}/authorize`)
    expect(metadata.token_endpoint).toBe(`${auth.issuer}/token`)
    expect(metadata.userinfo_endpoint).toBe(`${auth.issuer}/userinfo`)
    expect(metadata.device_authorization_endpoint).toBe(`${auth.issuer}/device/auth`)
    expect(metadata.jwks_uri).toBe(`${auth.issuer}/oidc/jwks`)
    expect(metadata.response_types_supported).toEqual(['code'])
    expect(metadata.code_challenge_methods_supported).toEqual(['S256'])
    expect(metadata.grant_types_supported).toEqual(
      expect.arrayContaining([
        'authorization_code',
        'refresh_token',
        'client_credentials',
        'urn:ietf:params:oauth:grant-type:device_code',
      ]),
    )
    expect(metadata.grant_types_supported).not.toContain('implicit')
    expect(metadata.grant_types_supported).not.toContain('password')
    expect(metadata.scopes_supported).toEqual(
      expect.arrayContaining(['openid', 'profile', 'email', 'address', 'phone', 'offline_access']),
    )
  })

  it('when the provider JWKS is fetched, then it publishes exactly the key ring public keys, current key first', async () => {
    const response = await fetch(`${auth.issuer}/oidc/jwks`)
    expect(response.status).toBe(200)
    const { keys } = (await response.json()) as { keys: { kid: string; d?: string }[] }
    expect(keys.map((key) => key.kid)).toEqual(auth.keyRing.publicJwks().keys.map((key) => key.kid))
    expect(keys[0]?.kid).toBe(auth.keyRing.signingKey().kid)
    expect(keys.every((key) => key.d === undefined)).toBe(true)

    // the access-token JWKS of /.well-known/jwks.json comes from the same key ring: the same keys
    const wellKnown = (await (await fetch(`${auth.issuer}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string; n: string }[]
    }
    expect(wellKnown.keys.map((key) => [key.kid, key.n])).toEqual(
      keys.map((key) => [key.kid, (key as { n?: string }).n]),
    )
  })

  it('when the SPA runs the code flow with PKCE, then the ID token carries sub, name, email, preferred_username and state comes back', async () => {
    const { callback, verifier, state } = await authorize(spa, {
      redirect_uri: spaRedirect,
      scope: 'openid profile email',
    })
    expect(callback.origin + callback.pathname).toBe(spaRedirect)
    expect(callback.searchParams.get('state')).toBe(state)

    const tokens = await client.authorizationCodeGrant(spa, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    expect(tokens.token_type.toLowerCase()).toBe('bearer')
    expect(tokens.expires_in).toBeGreaterThan(0)
    // no offline_access asked: no refresh token
    expect(tokens.refresh_token).toBeUndefined()
    const claims = tokens.claims()
    expect(claims).toMatchObject({
      iss: auth.issuer,
      aud: 'meridian-spa',
      sub: user.id,
      name: user.name,
      email: user.email,
      preferred_username: user.email,
    })
    // signed with the key ring's current key
    const header = JSON.parse(Buffer.from(tokens.id_token!.split('.')[0]!, 'base64url').toString())
    expect(header).toMatchObject({ alg: 'RS256', kid: auth.keyRing.signingKey().kid })

    const userinfo = await client.fetchUserInfo(spa, tokens.access_token, user.id)
    expect(userinfo).toEqual({
      sub: user.id,
      name: user.name,
      preferred_username: user.email,
      updated_at: expect.any(Number),
      email: user.email,
      email_verified: false,
    })
  })

  it("when the SPA asks for Meridian's APIs (resource) and users:read, then its access token is a JWT every service accepts, with the user's role, whether their address is verified (order's limit reads it) and that scope", async () => {
    const { callback, verifier, state } = await authorize(spa, {
      redirect_uri: spaRedirect,
      scope: 'openid profile email users:read',
      resource: meridianApiResource,
    })
    const tokens = await client.authorizationCodeGrant(
      spa,
      callback,
      { pkceCodeVerifier: verifier, expectedState: state },
      { resource: meridianApiResource },
    )
    const [header, payload] = tokens.access_token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()))
    expect(header).toMatchObject({ alg: 'RS256', typ: 'at+jwt', kid: auth.keyRing.signingKey().kid })
    expect(payload).toMatchObject({
      iss: auth.issuer,
      aud: 'meridian',
      sub: user.id,
      client_id: 'meridian-spa',
      name: user.name,
      email: user.email,
      role: 'user',
      roles: ['user'],
      email_verified: false,
    })
    expect(String(payload.scope).split(' ').sort()).toEqual(['email', 'openid', 'profile', 'users:read'])
    // the chassis verifies it as it verifies POST /login's tokens: the user reads themself
    const headers = { authorization: `Bearer ${tokens.access_token}` }
    const read = await auth.app.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toMatchObject({ id: user.id, email: user.email })
    // but it was granted no more than it asked: changing the user needs users:write
    const change = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: { name: 'Changed by a read-only token' },
    })
    expect(expectErrorEnvelope(change, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs users:write',
    )
  })

  it('when the consent page asks for API scopes, then it lists each with what it allows', async () => {
    const url = client.buildAuthorizationUrl(spa, {
      redirect_uri: spaRedirect,
      scope: 'openid orders:read orders:write',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      resource: meridianApiResource,
    })
    const browser = new TestBrowser(auth.issuer)
    const page = await browser.consentPageOf(url, user)
    expect(page).toContain('<code>orders:read</code>: Read orders')
    expect(page).toContain('<code>orders:write</code>: Place and cancel orders')
  })

  it("when a client asks for a resource that is not Meridian's, then invalid_target", async () => {
    const url = client.buildAuthorizationUrl(spa, {
      redirect_uri: spaRedirect,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      resource: 'https://elsewhere.example/api',
    })
    const answer = await fetch(url, { redirect: 'manual' })
    const location = new URL(answer.headers.get('location') ?? '', auth.issuer)
    expect(location.searchParams.get('error')).toBe('invalid_target')
  })

  it('when only openid profile is granted, then /userinfo and the ID token hold no email', async () => {
    const { callback, verifier, state } = await authorize(spa, {
      redirect_uri: spaRedirect,
      scope: 'openid profile',
    })
    const tokens = await client.authorizationCodeGrant(spa, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    expect(tokens.scope?.split(' ').sort()).toEqual(['openid', 'profile'])
    expect(tokens.claims()?.email).toBeUndefined()
    const userinfo = await client.fetchUserInfo(spa, tokens.access_token, user.id)
    expect(Object.keys(userinfo).sort()).toEqual(['name', 'preferred_username', 'sub', 'updated_at'])
  })

  it('when address and phone are granted, then /userinfo has no such claims since users hold none', async () => {
    const { callback, verifier, state } = await authorize(spa, {
      redirect_uri: spaRedirect,
      scope: 'openid address phone',
    })
    const tokens = await client.authorizationCodeGrant(spa, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    const userinfo = await client.fetchUserInfo(spa, tokens.access_token, user.id)
    expect(userinfo).toEqual({ sub: user.id })
  })

  it('when the confidential web client runs the code flow with its secret and offline_access, then its refresh token yields new tokens', async () => {
    const web = await client.discovery(
      new URL(auth.issuer),
      'meridian-web',
      undefined,
      client.ClientSecretBasic(webSecret),
      insecure,
    )
    const { callback, verifier, state } = await authorize(web, {
      redirect_uri: webRedirect,
      scope: 'openid email offline_access',
      // OIDC Core 11: offline_access is granted only with an explicit consent prompt
      prompt: 'consent',
    })
    const tokens = await client.authorizationCodeGrant(web, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    expect(tokens.refresh_token).toEqual(expect.any(String))
    expect(tokens.claims()?.aud).toBe('meridian-web')

    const refreshed = await client.refreshTokenGrant(web, tokens.refresh_token!)
    expect(refreshed.access_token).not.toBe(tokens.access_token)
    expect(refreshed.claims()?.sub).toBe(user.id)
    const userinfo = await client.fetchUserInfo(web, refreshed.access_token, user.id)
    expect(userinfo.email).toBe(user.email)

    // revoked, the (rotated) refresh token no longer works
    await client.tokenRevocation(web, refreshed.refresh_token ?? tokens.refresh_token!)
    await expect(
      client.refreshTokenGrant(web, refreshed.refresh_token ?? tokens.refresh_token!),
    ).rejects.toMatchObject({ error: 'invalid_grant' })
  })

  it('when the end-session endpoint is opened and confirmed, then the browser ends on the signed-out page', async () => {
    const browser = new TestBrowser(auth.issuer)
    const response = await browser.request('/session/end')
    expect(response.status).toBe(200)
    // the provider's own form (auto-submitted by browsers), carrying its xsrf token
    const html = await response.text()
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1]
    expect(html).toContain('/session/end/confirm')
    const confirmed = await browser.postForm('/session/end/confirm', { xsrf: xsrf ?? '', logout: 'yes' })
    expect(confirmed.status).toBe(303)
    const done = await browser.request(confirmed.headers.get('location') ?? '')
    expect(done.status).toBe(200)
    expect(await done.text()).toContain('You are signed out.')
  })

  it('when the web client presents a wrong secret, then the token endpoint answers invalid_client', async () => {
    const web = await client.discovery(
      new URL(auth.issuer),
      'meridian-web',
      undefined,
      client.ClientSecretBasic('not-the-secret-of-meridian-web-at-all'),
      insecure,
    )
    const { callback, verifier, state } = await authorize(web, { redirect_uri: webRedirect, scope: 'openid' })
    const error = await client
      .authorizationCodeGrant(web, callback, { pkceCodeVerifier: verifier, expectedState: state })
      .catch((failure: unknown) => failure)
    expect(error).toBeInstanceOf(client.WWWAuthenticateChallengeError)
    const { status, response } = error as client.WWWAuthenticateChallengeError
    expect(status).toBe(401)
    expect(await response.json()).toMatchObject({ error: 'invalid_client' })
  })

  it('when the machine client uses client_credentials, then it receives an active access token without an ID token', async () => {
    const machine = await client.discovery(
      new URL(auth.issuer),
      'meridian-machine',
      undefined,
      client.ClientSecretBasic(machineSecret),
      insecure,
    )
    const tokens = await client.clientCredentialsGrant(machine)
    expect(tokens.access_token).toEqual(expect.any(String))
    expect(tokens.id_token).toBeUndefined()
    expect(tokens.refresh_token).toBeUndefined()
    const introspection = await client.tokenIntrospection(machine, tokens.access_token)
    expect(introspection).toMatchObject({ active: true, client_id: 'meridian-machine' })
  })

  it("when the machine client's token for Meridian's APIs holds orders:read, then it is refused where users:read is needed, naming it", async () => {
    const machine = await client.discovery(
      new URL(auth.issuer),
      'meridian-machine',
      undefined,
      client.ClientSecretBasic(machineSecret),
      insecure,
    )
    const tokens = await client.clientCredentialsGrant(machine, {
      scope: 'orders:read',
      resource: meridianApiResource,
    })
    expect(tokens.scope).toBe('orders:read')
    const answer = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${user.id}`,
      headers: { authorization: `Bearer ${tokens.access_token}` },
    })
    expect(expectErrorEnvelope(answer, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs users:read',
    )
  })

  it('when a client asks for a scope outside the catalogue, then it is not granted', async () => {
    const machine = await client.discovery(
      new URL(auth.issuer),
      'meridian-machine',
      undefined,
      client.ClientSecretBasic(machineSecret),
      insecure,
    )
    const tokens = await client.clientCredentialsGrant(machine, {
      scope: 'orders:read widgets:write',
      resource: meridianApiResource,
    })
    expect(tokens.scope).toBe('orders:read')
  })

  it('when a device asks for a code and the user confirms it in the browser, then polling yields tokens for that user', async () => {
    const device = await client.discovery(
      new URL(auth.issuer),
      'meridian-device',
      undefined,
      client.None(),
      insecure,
    )
    const authorization = await client.initiateDeviceAuthorization(device, {
      scope: 'openid profile offline_access',
    })
    expect(authorization.verification_uri).toBe(`${auth.issuer}/device`)
    const { html } = await new TestBrowser(auth.issuer).confirmDevice(
      authorization.verification_uri,
      authorization.user_code,
      user,
    )
    expect(html).toContain('is signed in')

    const tokens = await client.pollDeviceAuthorizationGrant(device, authorization)
    expect(tokens.claims()).toMatchObject({ sub: user.id, name: user.name, aud: 'meridian-device' })
    expect(tokens.refresh_token).toEqual(expect.any(String))
  })

  it('when a code has been exchanged, then PostgreSQL holds the session, grant and tokens, and the code is marked consumed', async () => {
    const { callback, verifier, state } = await authorize(spa, { redirect_uri: spaRedirect, scope: 'openid' })
    await client.authorizationCodeGrant(spa, callback, { pkceCodeVerifier: verifier, expectedState: state })
    const rows = await auth.sql<{ model: string; consumedAt: Date | null; expiresAt: Date | null }[]>`
      select model, consumed_at, expires_at from oidc_payloads`
    const models = new Set(rows.map((row) => row.model))
    for (const model of ['Session', 'Grant', 'AuthorizationCode', 'AccessToken']) {
      expect(models).toContain(model)
    }
    const codes = rows.filter((row) => row.model === 'AuthorizationCode')
    expect(codes.some((row) => row.consumedAt instanceof Date)).toBe(true)
    expect(rows.every((row) => row.expiresAt instanceof Date)).toBe(true)
  })

  it('when a row has expired, then the adapter no longer finds it and the cleanup deletes it', async () => {
    const adapter = createPostgresAdapter(auth.sql, 'AccessToken')
    await adapter.upsert('expired-token', { grantId: 'g-1', accountId: user.id }, 1)
    await adapter.upsert('live-token', { grantId: 'g-1', snake_case_key: { nested_key: 1 } }, 3600)
    expect(await adapter.find('live-token')).toMatchObject({ snake_case_key: { nested_key: 1 } })
    await auth.sql`update oidc_payloads set expires_at = now() - interval '2 minutes' where id = 'expired-token'`
    expect(await adapter.find('expired-token')).toBeUndefined()

    expect(await deleteExpiredPayloads(auth.sql)).toBeGreaterThanOrEqual(1)
    const left = await auth.sql`select id from oidc_payloads where id in ('expired-token', 'live-token')`
    expect(left.map((row) => row.id)).toEqual(['live-token'])

    await adapter.revokeByGrantId('g-1')
    expect(await adapter.find('live-token')).toBeUndefined()
  })
})
