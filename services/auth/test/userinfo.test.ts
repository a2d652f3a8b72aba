// GET and POST /userinfo: the claims of the current user for a Meridian access token or an OpenID Connect one, and
// the refusals (envelope, WWW-Authenticate) of missing, bad, expired and under-scoped tokens.
import { createHmac, createPublicKey } from 'node:crypto'
import { expectErrorEnvelope } from '@meridian/testkit'
import { Validator } from '@seriousme/openapi-schema-validator'
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccessTokenIssuer } from '../src/domain/access-tokens.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { type SignedIn, signedIn } from './identities.ts'
import { type OidcTestApp, signInWithPkce, startOidcTestApp } from './oidc-browser.ts'

const spaOrigin = 'http://localhost:5173'
const spaRedirect = `${spaOrigin}/callback`
const webOrigin = 'http://localhost:3000'
const insecure = { execute: [client.allowInsecureRequests] }

interface Answer {
  statusCode: number
  headers: Record<string, unknown>
  json(): unknown
}

/** A refused token: the envelope with this status and message, and no details or retryAfter beside them. */
function expectRefusal(response: Answer, status: 401 | 403, message: string): void {
  const error = expectErrorEnvelope(response, status, status === 401 ? 'UNAUTHORIZED' : 'INSUFFICIENT_SCOPE')
  expect(error).toEqual({ code: error.code, message, requestId: error.requestId, timestamp: error.timestamp })
}

/** The parameters of a Bearer challenge (RFC 6750 3), unquoted. */
function challengeOf(response: Answer): { scheme: string; parameters: Record<string, string> } {
  const header = String(response.headers['www-authenticate'] ?? '')
  const scheme = header.split(' ')[0] ?? ''
  const parameters = Object.fromEntries(
    [...header.slice(scheme.length).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [
      match[1],
      match[2]?.replace(/\\(.)/g, '$1'),
    ]),
  )
  return { scheme, parameters }
}

describe('GET /userinfo', () => {
  let auth: OidcTestApp
  let spa: client.Configuration

  beforeAll(async () => {
    auth = await startOidcTestApp()
    spa = await client.discovery(new URL(auth.issuer), 'meridian-spa', undefined, client.None(), insecure)
  })
  afterAll(async () => {
    await auth.close()
  })

  const userinfo = (headers: Record<string, string> = {}, method: 'GET' | 'POST' = 'GET') =>
    auth.app.inject({ method, url: '/userinfo', headers })

  /** An OpenID Connect access token of the SPA for a signed-in user, from the code flow with PKCE. */
  async function oidcToken(person: SignedIn, scope: string): Promise<string> {
    const credentials = { email: person.user.email, password: person.user.password }
    const { callback, verifier, state } = await signInWithPkce(auth.issuer, spa, credentials, {
      redirect_uri: spaRedirect,
      scope,
    })
    const tokens = await client.authorizationCodeGrant(spa, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    })
    return tokens.access_token
  }

  describe('with a Meridian access token', () => {
    it('when the token of POST /login is sent, then the standard claims of the user and role, roles are answered', async () => {
      const person = await signedIn(auth, { name: 'Grace Hopper', role: 'admin' })
      const response = await userinfo(person.headers)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({
        sub: person.user.id,
        name: 'Grace Hopper',
        preferred_username: person.user.email,
        email: person.user.email,
        email_verified: false,
        updated_at: expect.any(Number),
        role: 'admin',
        roles: ['admin'],
      })
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.headers['x-request-id']).toEqual(expect.any(String))
    })

    it('when it is sent with POST and a form body, then the same claims are answered', async () => {
      const person = await signedIn(auth)
      const response = await auth.app.inject({
        method: 'POST',
        url: '/userinfo',
        headers: { ...person.headers, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'access_token=ignored',
      })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ sub: person.user.id, role: 'user', roles: ['user'] })
    })

    it('when its signature does not match (the payload names another user), then 401 Invalid or expired token with an invalid_token challenge', async () => {
      const victim = await signedIn(auth)
      const attacker = await signedIn(auth)
      const [header, , signature] = attacker.accessToken.split('.')
      const payload = JSON.parse(
        Buffer.from(victim.accessToken.split('.')[1] ?? '', 'base64url').toString(),
      ) as Record<string, unknown>
      const forged = `${header}.${Buffer.from(JSON.stringify({ ...payload, role: 'admin' })).toString('base64url')}.${signature}`
      const response = await userinfo({ authorization: `Bearer ${forged}` })
      expectRefusal(response, 401, 'Invalid or expired token')
      expect(challengeOf(response)).toEqual({
        scheme: 'Bearer',
        parameters: {
          realm: 'meridian',
          error: 'invalid_token',
          error_description: expect.any(String),
        },
      })
    })

    it('when it is signed with HS256 and the public key, or with alg none, then 401 Invalid or expired token', async () => {
      const person = await signedIn(auth)
      const [, payload] = person.accessToken.split('.')
      const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
      const unsigned = `${encode({ alg: 'none', typ: 'JWT' })}.${payload}.`
      const publicPem = createPublicKey(auth.keyRing.signingKey().privateKey)
        .export({ format: 'pem', type: 'spki' })
        .toString()
      const confusedHeader = encode({ alg: 'HS256', typ: 'JWT', kid: auth.keyRing.signingKey().kid })
      const confused = `${confusedHeader}.${payload}.${createHmac('sha256', publicPem).update(`${confusedHeader}.${payload}`).digest('base64url')}`
      for (const token of [unsigned, confused]) {
        const response = await userinfo({ authorization: `Bearer ${token}` })
        expectRefusal(response, 401, 'Invalid or expired token')
        expect(challengeOf(response).parameters.error).toBe('invalid_token')
      }
    })

    it('when it has expired, then 401 Invalid or expired token', async () => {
      const person = await signedIn(auth)
      const issuedLongAgo = createAccessTokenIssuer({
        signing: { algorithm: 'RS256', keyRing: auth.keyRing },
        issuer: auth.config.JWT_ISSUER,
        audience: auth.config.JWT_AUDIENCE,
        ttlSeconds: auth.config.ACCESS_TOKEN_TTL_SECONDS,
        clock: () => Date.now() - 2 * 60 * 60 * 1000,
      }).issue({ ...person.user })
      const response = await userinfo({ authorization: `Bearer ${issuedLongAgo.accessToken}` })
      expectRefusal(response, 401, 'Invalid or expired token')
      expect(challengeOf(response).parameters.error).toBe('invalid_token')
    })

    it('when its user has been deleted, then 401 Invalid or expired token', async () => {
      const person = await signedIn(auth)
      await auth.sql`delete from users where id = ${person.user.id}`
      const response = await userinfo(person.headers)
      expectRefusal(response, 401, 'Invalid or expired token')
      expect(challengeOf(response).parameters.error).toBe('invalid_token')
    })

    it('when its user has been suspended, then 401 Invalid or expired token', async () => {
      const person = await signedIn(auth)
      await auth.sql`update users set status = 'suspended' where id = ${person.user.id}`
      const response = await userinfo(person.headers)
      expectRefusal(response, 401, 'Invalid or expired token')
    })
  })

  describe('with an OpenID Connect access token', () => {
    it('when the token of a code flow with openid profile email is sent, then its scopes claims are answered, without role claims', async () => {
      const person = await signedIn(auth, { name: 'Ada Byron' })
      const token = await oidcToken(person, 'openid profile email')
      const response = await userinfo({ authorization: `Bearer ${token}` })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({
        sub: person.user.id,
        name: 'Ada Byron',
        preferred_username: person.user.email,
        updated_at: expect.any(Number),
        email: person.user.email,
        email_verified: false,
      })
      // and a relying party reads them through discovery's userinfo_endpoint
      expect(spa.serverMetadata().userinfo_endpoint).toBe(`${auth.issuer}/userinfo`)
      const read = await client.fetchUserInfo(spa, token, person.user.id)
      expect(read).toEqual(response.json())
    })

    it('when only openid is granted, then only sub is answered', async () => {
      const person = await signedIn(auth)
      const token = await oidcToken(person, 'openid')
      const response = await userinfo({ authorization: `Bearer ${token}` }, 'POST')
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ sub: person.user.id })
    })

    it('when the token lacks the openid scope, then 403 INSUFFICIENT_SCOPE naming openid with an insufficient_scope challenge', async () => {
      const person = await signedIn(auth)
      const token = await oidcToken(person, 'profile')
      const response = await userinfo({ authorization: `Bearer ${token}` })
      expectRefusal(response, 403, 'Insufficient scope: this operation needs openid')
      expect(challengeOf(response)).toEqual({
        scheme: 'Bearer',
        parameters: {
          realm: 'meridian',
          error: 'insufficient_scope',
          error_description: expect.any(String),
          scope: 'openid',
        },
      })
    })

    it('when the token has expired, then 401 Invalid or expired token', async () => {
      const person = await signedIn(auth)
      const token = await oidcToken(person, 'openid profile')
      // the row is still there (the cleanup has not run) but the token's own exp has passed
      await auth.sql`
        update oidc_payloads
        set payload = jsonb_set(payload, '{exp}', to_jsonb(extract(epoch from now())::int - 60))
        where model = 'AccessToken' and id = ${token}`
      const response = await userinfo({ authorization: `Bearer ${token}` })
      expectRefusal(response, 401, 'Invalid or expired token')
      expect(challengeOf(response).parameters.error).toBe('invalid_token')
    })

    it('when the token has been revoked, then 401 Invalid or expired token', async () => {
      const person = await signedIn(auth)
      const token = await oidcToken(person, 'openid profile')
      await client.tokenRevocation(spa, token, { token_type_hint: 'access_token' })
      const response = await userinfo({ authorization: `Bearer ${token}` })
      expectRefusal(response, 401, 'Invalid or expired token')
    })

    it('when the token user has been suspended, then 401 Invalid or expired token', async () => {
      const person = await signedIn(auth)
      const token = await oidcToken(person, 'openid profile')
      await auth.sql`update users set status = 'suspended' where id = ${person.user.id}`
      const response = await userinfo({ authorization: `Bearer ${token}` })
      expectRefusal(response, 401, 'Invalid or expired token')
      expect(challengeOf(response).parameters.error).toBe('invalid_token')
    })

    it('when the token user has been deleted, then 401 Invalid or expired token', async () => {
      const person = await signedIn(auth)
      const token = await oidcToken(person, 'openid profile')
      await auth.sql`delete from users where id = ${person.user.id}`
      const response = await userinfo({ authorization: `Bearer ${token}` })
      expectRefusal(response, 401, 'Invalid or expired token')
    })
  })

  describe('without a usable credential', () => {
    it('when no Authorization header is sent, then 401 Missing token with a Bearer challenge of realm meridian only', async () => {
      const response = await userinfo()
      expectRefusal(response, 401, 'Missing token')
      expect(response.headers['www-authenticate']).toBe('Bearer realm="meridian"')
    })

    it.each([
      ['the Basic scheme', 'Basic bWVyaWRpYW46c2VjcmV0'],
      ['Bearer without a token', 'Bearer '],
      ['a token without a scheme', 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG'],
    ])('when the header holds %s, then 401 Missing token', async (_case, authorization) => {
      const response = await userinfo({ authorization })
      expectRefusal(response, 401, 'Missing token')
      expect(response.headers['www-authenticate']).toBe('Bearer realm="meridian"')
    })

    it('when only a session cookie is sent, then 401 Missing token: /userinfo takes a bearer token only', async () => {
      const response = await userinfo({ cookie: 'sid=some-session' })
      expectRefusal(response, 401, 'Missing token')
    })

    it.each([
      ['garbage', 'garbage'],
      ['an unknown token of the provider form', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
      ['three dotted parts that are no JWT', 'a.b.c'],
      ['quotes and backslashes', 'x"y\\z'],
      ['a very long value', 'x'.repeat(6000)],
      ['SQL', "' or 1=1 --"],
    ])('when the token is %s, then 401 Invalid or expired token', async (_case, token) => {
      const response = await userinfo({ authorization: `Bearer ${token}` })
      expectRefusal(response, 401, 'Invalid or expired token')
      expect(challengeOf(response).parameters.error).toBe('invalid_token')
    })

    it('when the client sends an X-Request-Id, then the refusal carries it in the header and the envelope', async () => {
      const response = await userinfo({ 'x-request-id': 'userinfo-test-request-1' })
      expectRefusal(response, 401, 'Missing token')
      expect(response.headers['x-request-id']).toBe('userinfo-test-request-1')
    })
  })

  describe('CORS for browser clients', () => {
    it('when a browser client preflights from the origin of its redirect URI, then the provider allows GET and the Authorization header', async () => {
      const response = await fetch(`${auth.issuer}/userinfo`, {
        method: 'OPTIONS',
        headers: {
          origin: spaOrigin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      })
      expect(response.status).toBe(204)
      expect(response.headers.get('access-control-allow-origin')).toBe(spaOrigin)
      expect(response.headers.get('access-control-allow-methods')).toContain('GET')
      expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization')
    })

    it('when the SPA reads /userinfo with its token from its origin, then the answer allows that origin', async () => {
      const person = await signedIn(auth)
      const token = await oidcToken(person, 'openid')
      const response = await fetch(`${auth.issuer}/userinfo`, {
        headers: { authorization: `Bearer ${token}`, origin: spaOrigin },
      })
      expect(response.status).toBe(200)
      expect(response.headers.get('access-control-allow-origin')).toBe(spaOrigin)
      expect(response.headers.get('vary')).toContain('Origin')
    })

    it('when the SPA token is sent from another client origin or a foreign one, then the answer allows no origin', async () => {
      const person = await signedIn(auth)
      const token = await oidcToken(person, 'openid')
      for (const origin of [webOrigin, 'https://evil.example']) {
        const response = await fetch(`${auth.issuer}/userinfo`, {
          headers: { authorization: `Bearer ${token}`, origin },
        })
        expect(response.headers.get('access-control-allow-origin')).toBeNull()
      }
    })

    it('when a refusal goes to a registered origin, then the page may read it and its WWW-Authenticate', async () => {
      const response = await fetch(`${auth.issuer}/userinfo`, { headers: { origin: spaOrigin } })
      expect(response.status).toBe(401)
      expect(response.headers.get('access-control-allow-origin')).toBe(spaOrigin)
      expect(response.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate')
    })
  })

  describe('documentation', () => {
    it('when /docs/json is fetched, then /userinfo is documented for GET and POST with its statuses and the bearer scheme only', async () => {
      const document = (await auth.app.inject({ method: 'GET', url: '/docs/json' })).json()
      const result = await new Validator().validate(document)
      expect(result.errors ?? []).toEqual([])
      expect(Object.keys(document.paths['/userinfo'] ?? {}).sort()).toEqual(['get', 'post'])
      for (const operation of [document.paths['/userinfo'].get, document.paths['/userinfo'].post]) {
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '429']))
        expect(JSON.stringify(operation.responses['200'])).toContain('preferred_username')
        expect(operation.security).toEqual([{ bearerAuth: ['openid'] }])
      }
      expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    })
  })
})

describe('GET /userinfo in HS256 mode', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp({
      JWT_ALGORITHM: 'HS256',
      JWT_SECRET: 'an-hs256-secret-of-at-least-32-characters!',
    })
  })
  afterAll(async () => {
    await auth.close()
  })

  it('when the HS256 token of POST /login is sent, then the claims of the user are answered', async () => {
    const person = await signedIn(auth)
    const response = await auth.app.inject({ method: 'GET', url: '/userinfo', headers: person.headers })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ sub: person.user.id, email: person.user.email, role: 'user' })
  })

  it('when an HS256 token is signed with another secret, then 401 Invalid or expired token', async () => {
    const person = await signedIn(auth)
    const [header, payload] = person.accessToken.split('.')
    const forged = `${header}.${payload}.${createHmac('sha256', 'another-secret-of-at-least-32-chars!!').update(`${header}.${payload}`).digest('base64url')}`
    const response = await auth.app.inject({
      method: 'GET',
      url: '/userinfo',
      headers: { authorization: `Bearer ${forged}` },
    })
    expectRefusal(response, 401, 'Invalid or expired token')
  })
})
