// POST /login: token pairs with the spec's claims, one answer for every bad credential, and the login throttle.
import { randomUUID } from 'node:crypto'
import { expectErrorEnvelope } from '@meridian/testkit'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { createTestUser, login, randomAddress } from './identities.ts'

describe('login', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp({
      LOGIN_MAX_FAILURES_PER_ADDRESS: '4',
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
      LOGIN_FAILURE_WINDOW_SECONDS: '120',
      ACCESS_TOKEN_TTL_SECONDS: '1200',
    })
  })
  afterAll(async () => {
    await auth.close()
  })

  it('when the email and password are right, then 200 with a token pair whose RS256 access token carries the spec claims and the kid of a published key', async () => {
    const user = await createTestUser(auth, { name: 'Grace Hopper', role: 'admin' })
    const response = await login(auth, { email: user.email.toUpperCase(), password: user.password })
    expect(response.statusCode).toBe(200)
    const pair = response.json()
    expect(pair).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      tokenType: 'Bearer',
      expiresIn: 1200,
    })
    const header = decodeProtectedHeader(pair.accessToken)
    expect(header).toMatchObject({ alg: 'RS256', kid: auth.keyRing.signingKey().kid })
    const jwks = (await auth.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json()
    const { payload } = await jwtVerify(pair.accessToken, createLocalJWKSet(jwks), {
      issuer: auth.config.JWT_ISSUER,
      audience: auth.config.JWT_AUDIENCE,
    })
    expect(payload).toEqual({
      sub: user.id,
      name: 'Grace Hopper',
      email: user.email,
      role: 'admin',
      roles: ['admin'],
      // whether the address is proved, as when the token was issued (a new user's is not)
      email_verified: false,
      iss: auth.config.JWT_ISSUER,
      aud: auth.config.JWT_AUDIENCE,
      iat: expect.any(Number),
      exp: expect.any(Number),
    })
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(1200)
    // the refresh token is stored only as its hash
    const stored = await auth.sql`select token_hash from refresh_tokens where user_id = ${user.id}`
    expect(stored).toHaveLength(1)
    expect(JSON.stringify(stored)).not.toContain(pair.refreshToken)
  })

  it('when the access token is used, then it authenticates the user on the users resource', async () => {
    const user = await createTestUser(auth)
    const { accessToken } = (await login(auth, user)).json()
    const response = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${user.id}`,
      headers: { authorization: `Bearer ${accessToken}` },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json().email).toBe(user.email)
  })

  it('when the password is wrong, the email unknown, or the account not active, then the same 401 with the same message', async () => {
    const user = await createTestUser(auth)
    const suspended = await createTestUser(auth, { status: 'suspended' })
    const inactive = await createTestUser(auth, { status: 'inactive' })
    const answers = [
      await login(auth, { email: user.email, password: 'not the password' }),
      await login(auth, { email: `nobody.${randomUUID()}@example.com`, password: user.password }),
      await login(auth, suspended),
      await login(auth, inactive),
    ]
    for (const response of answers) {
      expect(expectErrorEnvelope(response, 401, 'UNAUTHORIZED').message).toBe('Invalid email or password')
      expect(response.headers['set-cookie']).toBeUndefined()
    }
    // one body shape for all: nothing but the request id and the time differ
    const shapes = answers.map((r) => ({ ...r.json().error, requestId: '', timestamp: '' }))
    expect(new Set(shapes.map((s) => JSON.stringify(s))).size).toBe(1)
  })

  it('when an unknown email is tried, then it takes about as much work as a wrong password (a dummy hash is verified)', async () => {
    const user = await createTestUser(auth)
    // the CPU time of this process (the hash's threads included): what other processes of a loaded machine take
    // stretches wall time, not the work a login does; compared as a ratio, never against a number of ms
    const time = async (email: string) => {
      const before = process.cpuUsage()
      await login(auth, { email, password: 'wrong password' })
      const spent = process.cpuUsage(before)
      return spent.user + spent.system
    }
    // warm up, then compare medians of a few tries each
    await time(user.email)
    const known: number[] = []
    const unknown: number[] = []
    for (let i = 0; i < 3; i++) {
      const other = await createTestUser(auth)
      known.push(await time(other.email))
      unknown.push(await time(`ghost.${randomUUID()}@example.com`))
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[1] ?? 0
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.4)
  })

  it('when the body is not a login (no password, bad email, extra field), then 422 without echoing the password', async () => {
    for (const payload of [
      { email: 'a@example.com' },
      { email: 'not-an-email', password: 'secret-pw-123' },
      { email: 'a@example.com', password: 'secret-pw-123', role: 'admin' },
    ]) {
      const response = await auth.app.inject({
        method: 'POST',
        url: '/login',
        headers: { 'content-type': 'application/json' },
        payload,
        remoteAddress: randomAddress(),
      })
      expect(response.statusCode).toBe(422)
      expect(response.body).not.toContain('secret-pw-123')
    }
  })

  it('when one account fails more than its limit, then 429 RATE_LIMITED with Retry-After, even with the right password, from any address', async () => {
    const user = await createTestUser(auth)
    for (let i = 0; i < 3; i++) {
      const failed = await login(auth, { email: user.email, password: `wrong ${i}` })
      expect(failed.statusCode).toBe(401)
    }
    const blocked = await login(auth, user)
    const error = expectErrorEnvelope(blocked, 429, 'RATE_LIMITED')
    const retryAfter = Number(blocked.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(120)
    expect(error.retryAfter).toBe(retryAfter)
    // another account is not affected
    const other = await createTestUser(auth)
    expect((await login(auth, other)).statusCode).toBe(200)
  })

  it('when an email that has no account fails as often, then it is throttled the same way (the throttle does not reveal accounts)', async () => {
    const email = `ghost.${randomUUID()}@example.com`
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) statuses.push((await login(auth, { email, password: 'guess' })).statusCode)
    expect(statuses).toEqual([401, 401, 401, 429])
  })

  it('when a login succeeds, then the account counter starts again', async () => {
    const user = await createTestUser(auth)
    await login(auth, { email: user.email, password: 'wrong 1' })
    await login(auth, { email: user.email, password: 'wrong 2' })
    expect((await login(auth, user)).statusCode).toBe(200)
    await login(auth, { email: user.email, password: 'wrong 3' })
    await login(auth, { email: user.email, password: 'wrong 4' })
    expect((await login(auth, user)).statusCode).toBe(200)
  })

  it('when one address fails more than its limit across accounts, then that address gets 429 while another address is served', async () => {
    const address = randomAddress()
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      const victim = await createTestUser(auth)
      statuses.push(
        (await login(auth, { email: victim.email, password: 'wrong' }, { remoteAddress: address }))
          .statusCode,
      )
    }
    expect(statuses).toEqual([401, 401, 401, 401])
    const user = await createTestUser(auth)
    const blocked = await login(auth, user, { remoteAddress: address })
    const error = expectErrorEnvelope(blocked, 429, 'RATE_LIMITED')
    expect(blocked.headers['retry-after']).toMatch(/^\d+$/)
    expect(error.retryAfter).toBe(Number(blocked.headers['retry-after']))
    expect((await login(auth, user, { remoteAddress: randomAddress() })).statusCode).toBe(200)
  })
})
