// Bearer tokens: valid ones become principals; every token of the attack catalogue is a 401 `Invalid or expired token`.
import { randomUUID } from 'node:crypto'
import { expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  assertValidJwtVerification,
  createAccessTokenVerifier,
  InvalidTokenError,
} from '../src/auth/access-token.ts'
import {
  type AuthApp,
  audience,
  bearer,
  buildAuthApp,
  claims,
  craftToken,
  hs256,
  hsSecret,
  hsToken,
  issuer,
  type JwksServer,
  type RsaKey,
  rs256,
  rsaKey,
  rsToken,
  startJwksServer,
} from './auth-app.ts'

const now = () => Math.floor(Date.now() / 1000)

async function me(auth: AuthApp, headers: Record<string, string>, url = '/me') {
  return auth.app.inject({ method: 'GET', url, headers })
}

async function expectInvalidToken(auth: AuthApp, token: string, url = '/me') {
  const response = await me(auth, bearer(token), url)
  const error = expectErrorEnvelope(response, 401, 'UNAUTHORIZED', { context: token })
  expect(error.message, token).toBe('Invalid or expired token')
}

describe('auth: RS256 tokens verified with keys from the JWKS', () => {
  let key: RsaKey
  let jwks: JwksServer
  let attackerJwks: JwksServer
  let attacker: RsaKey
  let auth: AuthApp

  beforeAll(async () => {
    key = rsaKey('key-1')
    attacker = rsaKey('attacker-key')
    jwks = await startJwksServer([key.jwk])
    attackerJwks = await startJwksServer([attacker.jwk])
    auth = await buildAuthApp({ jwt: { algorithm: 'RS256', jwksUrl: jwks.url } })
  })
  afterAll(async () => {
    await auth.app.close()
    await jwks.close()
    await attackerJwks.close()
  })

  it('when a valid RS256 token is presented, then the principal carries its claims', async () => {
    const presented = claims({ role: 'user', roles: ['editor'] })
    const response = await me(auth, bearer(rsToken(key, presented)))
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      subject: 'user-1',
      kind: 'user',
      role: 'user',
      roles: ['editor'],
      name: 'Ada',
      email: 'ada@example.com',
      // a first-party token (no scope, no client_id): not limited to scopes
      method: 'bearer',
      // when the token stops being valid, for connections that outlive a request (the realtime channel)
      expiresAt: Number(presented.exp) * 1000,
      // when it was issued, for connections held while a revocation arrives
      issuedAt: Number(presented.iat) * 1000,
    })
  })

  it('when the token has no roles claim, then roles default to []', async () => {
    const { roles: _roles, ...withoutRoles } = claims()
    const response = await me(auth, bearer(rsToken(key, withoutRoles)))
    expect(response.statusCode).toBe(200)
    expect(response.json().roles).toEqual([])
  })

  it('when a client_credentials token (client_id equal to sub) is presented, then the principal is a client with its scopes', async () => {
    const token = rsToken(
      key,
      claims({
        sub: 'billing-service',
        client_id: 'billing-service',
        role: 'service',
        scope: 'orders:read  orders:write',
      }),
    )
    const response = await me(auth, bearer(token))
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({
      subject: 'billing-service',
      kind: 'client',
      scopes: ['orders:read', 'orders:write'],
    })
  })

  it('when the scheme is written `bearer` in lower case, then the token is accepted', async () => {
    const response = await me(auth, { authorization: `bearer ${rsToken(key)}` })
    expect(response.statusCode).toBe(200)
  })

  it('when the Authorization header is missing or not a Bearer one, then 401 Missing token', async () => {
    const token = rsToken(key)
    for (const headers of [
      {},
      { authorization: `Token ${token}` },
      { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      { authorization: token },
      { authorization: 'Bearer' },
      { authorization: 'Bearer   ' },
    ] as Record<string, string>[]) {
      const response = await me(auth, headers)
      const error = expectErrorEnvelope(response, 401, 'UNAUTHORIZED', { context: JSON.stringify(headers) })
      expect(error.message, JSON.stringify(headers)).toBe('Missing token')
    }
  })

  it('when alg is none in any case, with or without a signature, then the token is refused', async () => {
    const payload = claims({ role: 'admin' })
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      for (const header of [
        { alg, typ: 'JWT' },
        { alg, typ: 'JWT', kid: key.kid },
      ]) {
        const unsigned = craftToken(header, payload)
        await expectInvalidToken(auth, unsigned, '/admin')
        await expectInvalidToken(auth, unsigned.slice(0, -1), '/admin') // no third part at all
        await expectInvalidToken(auth, craftToken(header, payload, rs256(key.privateKey)), '/admin')
        await expectInvalidToken(auth, craftToken(header, payload, 'c2lnbmF0dXJl'), '/admin')
      }
    }
  })

  it('when an HS256 token is signed with the RS256 public key as the HMAC secret, then it is refused', async () => {
    const spki = key.publicKey.export({ type: 'spki', format: 'pem' }).toString()
    const pkcs1 = key.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString()
    const secrets: (string | Buffer)[] = [
      spki,
      spki.trim(),
      `\n${spki}`,
      `  ${spki}`,
      `\t\r\n${spki}`,
      `x${spki}`,
      pkcs1,
      key.publicKey.export({ type: 'spki', format: 'der' }),
      JSON.stringify(key.jwk),
    ]
    for (const secret of secrets) {
      for (const header of [{ kid: key.kid }, {}]) {
        await expectInvalidToken(auth, hsToken(claims({ role: 'admin' }), secret as string, header), '/admin')
      }
    }
  })

  it('when the token has no kid, then it is refused in RS256 mode', async () => {
    await expectInvalidToken(auth, craftToken({ alg: 'RS256', typ: 'JWT' }, claims(), rs256(key.privateKey)))
  })

  it('when the token embeds the attacker’s own key in a jwk header, then it is refused', async () => {
    const payload = claims({ role: 'admin' })
    const sign = rs256(attacker.privateKey)
    await expectInvalidToken(
      auth,
      craftToken({ alg: 'RS256', kid: key.kid, jwk: attacker.jwk }, payload, sign),
    )
    await expectInvalidToken(auth, craftToken({ alg: 'RS256', jwk: attacker.jwk }, payload, sign))
    await expectInvalidToken(
      auth,
      craftToken({ alg: 'RS256', kid: attacker.kid, jwk: attacker.jwk }, payload, sign),
    )
  })

  it('when jku or x5u point to an attacker JWKS, then the token is refused and the attacker server is never called', async () => {
    const payload = claims({ role: 'admin' })
    const sign = rs256(attacker.privateKey)
    for (const pointer of ['jku', 'x5u']) {
      for (const kid of [key.kid, attacker.kid]) {
        await expectInvalidToken(
          auth,
          craftToken({ alg: 'RS256', kid, [pointer]: attackerJwks.url }, payload, sign),
        )
      }
    }
    await expectInvalidToken(
      auth,
      craftToken(
        { alg: 'RS256', kid: key.kid, x5c: [Buffer.from('not a cert').toString('base64')] },
        payload,
        sign,
      ),
    )
    expect(attackerJwks.requests).toEqual([])
  })

  it('when the token has expired (beyond the 5 s tolerance), then it is refused; within it, accepted', async () => {
    await expectInvalidToken(auth, rsToken(key, claims({ iat: now() - 3600, exp: now() - 60 })))
    const response = await me(auth, bearer(rsToken(key, claims({ exp: now() - 2 }))))
    expect(response.statusCode).toBe(200)
  })

  it('when nbf is in the future (beyond the tolerance), then it is refused', async () => {
    await expectInvalidToken(auth, rsToken(key, claims({ nbf: now() + 60 })))
    expect((await me(auth, bearer(rsToken(key, claims({ nbf: now() + 2 }))))).statusCode).toBe(200)
  })

  it('when iss or aud are wrong or missing, or exp is missing, then the token is refused', async () => {
    const { iss: _iss, ...noIss } = claims()
    const { aud: _aud, ...noAud } = claims()
    const { exp: _exp, ...noExp } = claims()
    for (const payload of [
      claims({ iss: 'http://evil.test' }),
      claims({ iss: 'http://auth.test/' }),
      claims({ aud: 'another-api' }),
      claims({ aud: ['another-api', 'more'] }),
      noIss,
      noAud,
      noExp,
    ]) {
      await expectInvalidToken(auth, rsToken(key, payload))
    }
  })

  it('when aud is a list that includes our audience, then the token is accepted', async () => {
    const response = await me(auth, bearer(rsToken(key, claims({ aud: ['another-api', 'meridian'] }))))
    expect(response.statusCode).toBe(200)
  })

  it('when the payload was tampered with (role changed to admin), then the token is refused', async () => {
    const [header, , signature] = rsToken(key).split('.')
    const forged = Buffer.from(JSON.stringify(claims({ role: 'admin' }))).toString('base64url')
    await expectInvalidToken(auth, `${header}.${forged}.${signature}`, '/admin')
    await expectInvalidToken(auth, `${header}.${forged}.${signature}`)
  })

  it('when the token is signed by another key set with the same kid, then it is refused', async () => {
    const impostor = rsaKey(key.kid)
    await expectInvalidToken(auth, rsToken(impostor, claims({ role: 'admin' })), '/admin')
  })

  it('when an HS256 token arrives while RS256 is configured, then it is refused', async () => {
    await expectInvalidToken(auth, hsToken(claims(), hsSecret, { kid: key.kid }))
  })

  it('when claims have the wrong types, then the token is refused', async () => {
    for (const payload of [
      claims({ roles: 'admin' }),
      claims({ sub: 42 }),
      claims({ role: ['admin'] }),
      claims({ scope: ['a'] }),
    ]) {
      await expectInvalidToken(auth, rsToken(key, payload))
    }
  })

  it('when the token is garbage or truncated, then it is refused', async () => {
    const valid = rsToken(key)
    const [header, payload] = valid.split('.')
    for (const token of [
      'abc',
      'a.b.c',
      '...',
      valid.slice(0, -10),
      valid.slice(0, valid.lastIndexOf('.')),
      `${header}.${payload}`,
      `${valid}.extra`,
      `${valid}x`,
      `${Buffer.from('{not json').toString('base64url')}.${payload}.c2ln`,
      `${header}.${Buffer.from('[1,2]').toString('base64url')}.c2ln`,
      `${header}.${Buffer.from('"string"').toString('base64url')}.c2ln`,
      'x'.repeat(4000),
      `${valid} trailing`,
    ]) {
      await expectInvalidToken(auth, token)
    }
  })

  it('when a route does not require authentication, then a token is not verified and the JWKS is not fetched', async () => {
    const before = jwks.requests.length
    const response = await me(auth, bearer(rsToken(rsaKey(), claims())), '/public')
    expect(response.statusCode).toBe(200)
    expect(jwks.requests.length).toBe(before)
  })
})

describe('auth: JWKS refetches', () => {
  it('when many tokens with unknown kids arrive, then the JWKS is refetched at most once in the window', async () => {
    const key = rsaKey()
    const jwks = await startJwksServer([key.jwk])
    const auth = await buildAuthApp({
      jwt: { algorithm: 'RS256', jwksUrl: jwks.url, refetchIntervalMs: 60_000 },
    })
    try {
      expect((await me(auth, bearer(rsToken(key)))).statusCode).toBe(200)
      expect(jwks.requests).toHaveLength(1)

      const attacker = rsaKey()
      const flood = Array.from({ length: 30 }, () => rsToken({ ...attacker, kid: randomUUID() }, claims()))
      const responses = await Promise.all(flood.map((token) => me(auth, bearer(token))))
      expect(responses.map((response) => response.statusCode)).toEqual(flood.map(() => 401))
      for (const token of flood.slice(0, 5)) await expectInvalidToken(auth, token)
      expect(jwks.requests).toHaveLength(2)

      // the known key is still served from the cache meanwhile
      expect((await me(auth, bearer(rsToken(key)))).statusCode).toBe(200)
      expect(jwks.requests).toHaveLength(2)
    } finally {
      await auth.app.close()
      await jwks.close()
    }
  })

  it('when auth rotates to a new key, then a verifier accepts it after one refetch', async () => {
    const current = rsaKey('2024-01')
    const next = rsaKey('2024-02')
    const jwks = await startJwksServer([current.jwk])
    const auth = await buildAuthApp({
      jwt: { algorithm: 'RS256', jwksUrl: jwks.url, refetchIntervalMs: 200 },
    })
    try {
      expect((await me(auth, bearer(rsToken(current)))).statusCode).toBe(200)
      expect(jwks.requests).toHaveLength(1)

      jwks.keys = [current.jwk, next.jwk]
      expect((await me(auth, bearer(rsToken(next)))).statusCode).toBe(200)
      expect(jwks.requests).toHaveLength(2)
      // both kids are now cached
      expect((await me(auth, bearer(rsToken(next)))).statusCode).toBe(200)
      expect((await me(auth, bearer(rsToken(current)))).statusCode).toBe(200)
      expect(jwks.requests).toHaveLength(2)
    } finally {
      await auth.app.close()
      await jwks.close()
    }
  })

  it('when a kid is seen before auth publishes it, then it is accepted once the refetch window has passed', async () => {
    const current = rsaKey()
    const early = rsaKey()
    const jwks = await startJwksServer([current.jwk])
    const auth = await buildAuthApp({
      jwt: { algorithm: 'RS256', jwksUrl: jwks.url, refetchIntervalMs: 300 },
    })
    // the clock read for the window is held still, then moved past it: a slow machine's requests cannot drift out
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() })
    try {
      await expectInvalidToken(auth, rsToken(early))
      jwks.keys = [current.jwk, early.jwk]
      await expectInvalidToken(auth, rsToken(early)) // inside the window: no refetch
      expect(jwks.requests).toHaveLength(1)
      vi.setSystemTime(Date.now() + 350)
      expect((await me(auth, bearer(rsToken(early)))).statusCode).toBe(200)
      expect(jwks.requests).toHaveLength(2)
    } finally {
      vi.useRealTimers()
      await auth.app.close()
      await jwks.close()
    }
  })

  it('when the JWKS cannot be reached, then the answer is 503 rather than a 401', async () => {
    const jwks = await startJwksServer([])
    const url = jwks.url
    await jwks.close()
    const auth = await buildAuthApp({ jwt: { algorithm: 'RS256', jwksUrl: url } })
    try {
      const response = await me(auth, bearer(rsToken(rsaKey())))
      expectErrorEnvelope(response, 503, 'SERVICE_UNAVAILABLE')
    } finally {
      await auth.app.close()
    }
  })
})

describe('auth: the JWKS at several addresses (auth on several hosts)', () => {
  it('when the first address does not answer, then the next is asked and keeps being asked first', async () => {
    const key = rsaKey()
    const gone = await startJwksServer([key.jwk])
    const goneUrl = gone.url
    await gone.close()
    const jwks = await startJwksServer([key.jwk])
    const auth = await buildAuthApp({ jwt: { algorithm: 'RS256', jwksUrl: `${goneUrl}, ${jwks.url}` } })
    try {
      expect((await me(auth, bearer(rsToken(key)))).statusCode).toBe(200)
      expect(jwks.requests).toHaveLength(1)
      // a new kid: asked where the last answer came from, without waiting for the dead one
      const next = rsaKey()
      jwks.keys = [key.jwk, next.jwk]
      expect((await me(auth, bearer(rsToken(next)))).statusCode).toBe(200)
      expect(jwks.requests).toHaveLength(2)
    } finally {
      await auth.app.close()
      await jwks.close()
    }
  })

  it('when no address answers, then the answer is 503; a kid none of them has is 401', async () => {
    const first = await startJwksServer([])
    const second = await startJwksServer([])
    const urls = `${first.url},${second.url}`
    await Promise.all([first.close(), second.close()])
    const down = await buildAuthApp({ jwt: { algorithm: 'RS256', jwksUrl: urls } })
    const live = await startJwksServer([rsaKey().jwk])
    const other = await startJwksServer([rsaKey().jwk])
    const up = await buildAuthApp({ jwt: { algorithm: 'RS256', jwksUrl: `${live.url},${other.url}` } })
    try {
      expectErrorEnvelope(await me(down, bearer(rsToken(rsaKey()))), 503, 'SERVICE_UNAVAILABLE')
      await expectInvalidToken(up, rsToken(rsaKey()))
      // the first answered (without the kid): the second is not asked for the same set
      expect(other.requests).toHaveLength(0)
    } finally {
      await Promise.all([down.app.close(), up.app.close(), live.close(), other.close()])
    }
  })

  it('when an address of the list is not http(s), or the list is empty, then the verifier is refused', () => {
    for (const jwksUrl of ['http://127.0.0.1:1/jwks.json,file:///etc/passwd', ' , '])
      expect(() => assertValidJwtVerification({ algorithm: 'RS256', jwksUrl }), jwksUrl).toThrow(/http\(s\)/)
  })
})

describe('auth: RS256 with a key resolver (auth itself)', () => {
  let key: RsaKey
  let auth: AuthApp

  beforeAll(async () => {
    key = rsaKey('ring-1')
    auth = await buildAuthApp({
      jwt: { algorithm: 'RS256', keys: async (kid) => (kid === key.kid ? key.privateKey : undefined) },
    })
  })
  afterAll(async () => {
    await auth.app.close()
  })

  it('when the token is signed by a key of the ring, then it is accepted', async () => {
    const response = await me(auth, bearer(rsToken(key)))
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ subject: 'user-1', method: 'bearer' })
  })

  it('when the kid is not in the ring, or the signature is another key’s, then the token is refused', async () => {
    await expectInvalidToken(auth, rsToken(rsaKey('ring-2')))
    await expectInvalidToken(auth, rsToken(rsaKey(key.kid)))
    await expectInvalidToken(auth, craftToken({ alg: 'none', kid: key.kid }, claims()))
  })
})

describe('auth: HS256 with a shared secret', () => {
  let auth: AuthApp

  beforeAll(async () => {
    auth = await buildAuthApp({ jwt: { algorithm: 'HS256', secret: hsSecret } })
  })
  afterAll(async () => {
    await auth.app.close()
  })

  it('when the token is signed with the secret, then it is accepted', async () => {
    const response = await me(auth, bearer(hsToken()))
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ subject: 'user-1', kind: 'user', method: 'bearer' })
  })

  it('when the token is signed with another secret, is RS256, or is unsigned, then it is refused', async () => {
    const key = rsaKey()
    await expectInvalidToken(auth, hsToken(claims(), 'another-secret-of-at-least-32-characters'))
    await expectInvalidToken(auth, rsToken(key))
    await expectInvalidToken(auth, craftToken({ alg: 'RS256' }, claims(), rs256(key.privateKey)))
    await expectInvalidToken(auth, craftToken({ alg: 'none' }, claims()))
    await expectInvalidToken(auth, craftToken({ alg: 'HS512' }, claims(), hs256(hsSecret)))
    await expectInvalidToken(auth, hsToken(claims({ exp: now() - 60 })))
  })

  it('when a token is verified for a whole connection (remember: false), then it is checked but not remembered; a request’s is', async () => {
    const verifier = await createAccessTokenVerifier(auth.app, {
      jwt: { algorithm: 'HS256', secret: hsSecret },
      issuer,
      audience,
    })
    const token = hsToken()
    expect(await verifier.verify(token, { remember: false })).toMatchObject({ sub: 'user-1' })
    expect(verifier.remembered).toBe(0)
    await expect(verifier.verify(hsToken(claims({ exp: now() - 60 })), { remember: false })).rejects.toThrow(
      InvalidTokenError,
    )
    await verifier.verify(token)
    expect(verifier.remembered).toBe(1)
    // remembered once, it is used even by a caller that would not remember it
    expect(await verifier.verify(token, { remember: false })).toMatchObject({ sub: 'user-1' })
  })

  it('when the secret is shorter than 32 characters, then the plugin refuses to start', async () => {
    await expect(buildAuthApp({ jwt: { algorithm: 'HS256', secret: 'short' } })).rejects.toThrow(
      /at least 32/,
    )
  })
})
