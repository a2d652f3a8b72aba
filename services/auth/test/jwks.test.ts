// GET /.well-known/jwks.json, and the HS256 mode in which tokens use the shared secret but the JWKS still lists RSA keys.
import { createHmac } from 'node:crypto'
import { expectErrorEnvelope } from '@meridian/testkit'
import { decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { signedIn } from './identities.ts'

const privateMembers = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

describe('JWKS', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp({ JWKS_MAX_AGE_SECONDS: '600' })
  })
  afterAll(async () => {
    await auth.close()
  })

  it('when the JWKS is fetched, then it lists the signing key as a public RSA key (kid, alg, use) with no private part, cacheable', async () => {
    const response = await auth.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['cache-control']).toBe('public, max-age=600')
    const { keys } = response.json()
    expect(keys.length).toBeGreaterThanOrEqual(1)
    expect(keys[0].kid).toBe(auth.keyRing.signingKey().kid)
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' })
      // 2048-bit modulus: 256 bytes -> 342 base64url characters
      expect(key.n).toHaveLength(342)
      for (const member of privateMembers) expect(key).not.toHaveProperty(member)
    }
  })

  it('when the private keys are looked at in the database, then they are encrypted (no PEM, no DER header)', async () => {
    const rows = await auth.sql<
      { privateKeyEncrypted: string }[]
    >`select private_key_encrypted from signing_keys`
    for (const row of rows) {
      expect(row.privateKeyEncrypted).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
      expect(row.privateKeyEncrypted).not.toContain('PRIVATE KEY')
      // PKCS#8 DER starts with 0x30 0x82: base64 'MII'
      expect(row.privateKeyEncrypted.split('.')[3]).not.toMatch(/^MII/)
    }
  })
})

describe('HS256 mode', () => {
  const secret = 'an-hs256-secret-of-at-least-32-characters!'
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp({ JWT_ALGORITHM: 'HS256', JWT_SECRET: secret })
  })
  afterAll(async () => {
    await auth.close()
  })

  it('when a user logs in, then the access token is HS256 with the secret (no kid), and auth accepts it', async () => {
    const session = await signedIn(auth)
    const header = decodeProtectedHeader(session.accessToken)
    expect(header.alg).toBe('HS256')
    expect(header.kid).toBeUndefined()
    const { payload } = await jwtVerify(session.accessToken, new TextEncoder().encode(secret), {
      issuer: auth.config.JWT_ISSUER,
      audience: auth.config.JWT_AUDIENCE,
    })
    expect(payload.sub).toBe(session.user.id)
    const me = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${session.user.id}`,
      headers: session.headers,
    })
    expect(me.statusCode).toBe(200)
  })

  it('when an RS256 token signed with the key ring is presented, then 401: only HS256 is accepted', async () => {
    const session = await signedIn(auth)
    const { kid, privateKey } = auth.keyRing.signingKey()
    const { SignJWT } = await import('jose')
    const now = Math.floor(Date.now() / 1000)
    const rs256 = await new SignJWT({ role: 'user', roles: [] })
      .setProtectedHeader({ alg: 'RS256', kid })
      .setSubject(session.user.id)
      .setIssuer(auth.config.JWT_ISSUER)
      .setAudience(auth.config.JWT_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(privateKey)
    const response = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${session.user.id}`,
      headers: { authorization: `Bearer ${rs256}` },
    })
    expect(expectErrorEnvelope(response, 401, 'UNAUTHORIZED').message).toBe('Invalid or expired token')
  })

  it('when an HS256 token is signed with another secret, then 401', async () => {
    const session = await signedIn(auth)
    const [header, payload] = session.accessToken.split('.')
    const forged = `${header}.${payload}.${createHmac('sha256', 'another-secret-of-at-least-32-chars!!').update(`${header}.${payload}`).digest('base64url')}`
    const response = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${session.user.id}`,
      headers: { authorization: `Bearer ${forged}` },
    })
    expect(response.statusCode).toBe(401)
  })

  it('when the JWKS is fetched in HS256 mode, then it still lists the RSA keys (they sign OpenID Connect ID tokens)', async () => {
    const { keys } = (await auth.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json()
    expect(keys.length).toBeGreaterThanOrEqual(1)
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', kid: auth.keyRing.signingKey().kid })
    expect(JSON.stringify(keys)).not.toContain(secret)
  })
})
