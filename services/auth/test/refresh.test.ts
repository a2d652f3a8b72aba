// Refresh tokens: rotation on every use, reuse detection that revokes the family, races, expiry, and the cookie form.
import { authNames } from '@meridian/contracts'
import { expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { createTestUser, login, setCookies, signedIn } from './identities.ts'

const json = { 'content-type': 'application/json' }

describe('refresh', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp()
  })
  afterAll(async () => {
    await auth.close()
  })

  const refresh = (refreshToken: string) =>
    auth.app.inject({ method: 'POST', url: '/refresh', headers: json, payload: { refreshToken } })

  const expectRefused = (response: Awaited<ReturnType<typeof refresh>>) =>
    expect(expectErrorEnvelope(response, 401, 'UNAUTHORIZED').message).toBe(
      'Invalid or expired refresh token',
    )

  it('when a refresh token is used, then a new pair; the old refresh token is refused afterwards', async () => {
    const session = await signedIn(auth)
    const first = await refresh(session.refreshToken)
    expect(first.statusCode).toBe(200)
    const pair = first.json()
    expect(pair).toMatchObject({ tokenType: 'Bearer', expiresIn: 900 })
    expect(pair.refreshToken).not.toBe(session.refreshToken)
    const me = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${session.user.id}`,
      headers: { authorization: `Bearer ${pair.accessToken}` },
    })
    expect(me.statusCode).toBe(200)
    // the new one works once more: a chain of rotations
    const second = await refresh(pair.refreshToken)
    expect(second.statusCode).toBe(200)
    const rows = await auth.sql<{ familyId: string }[]>`
      select distinct family_id from refresh_tokens where user_id = ${session.user.id}`
    expect(rows).toHaveLength(1)
  })

  it('when a spent refresh token is presented again, then 401 and its whole family is revoked: the newest token is refused too', async () => {
    const session = await signedIn(auth)
    const rotated = (await refresh(session.refreshToken)).json()
    const newest = (await refresh(rotated.refreshToken)).json()
    expectRefused(await refresh(session.refreshToken))
    expectRefused(await refresh(newest.refreshToken))
    const live = await auth.sql`
      select id from refresh_tokens where user_id = ${session.user.id} and revoked_at is null`
    expect(live).toHaveLength(0)
    // another login of the same user is a family of its own and unaffected
    const again = (await login(auth, session.user)).json()
    expect((await refresh(again.refreshToken)).statusCode).toBe(200)
  })

  it('when two refreshes race with the same token, then exactly one wins and the other counts as reuse (family revoked)', async () => {
    const session = await signedIn(auth)
    const answers = await Promise.all([refresh(session.refreshToken), refresh(session.refreshToken)])
    const statuses = answers.map((r) => r.statusCode).sort()
    expect(statuses).toEqual([200, 401])
    const winner = answers.find((r) => r.statusCode === 200)?.json()
    expectRefused(await refresh(winner.refreshToken))
    const issued = await auth.sql`select id from refresh_tokens where user_id = ${session.user.id}`
    // the login's token and exactly one successor
    expect(issued).toHaveLength(2)
  })

  it('when the refresh token has expired, is unknown, or its user is no longer active, then 401', async () => {
    const session = await signedIn(auth)
    await auth.sql`update refresh_tokens set expires_at = now() - interval '1 second' where user_id = ${session.user.id}`
    expectRefused(await refresh(session.refreshToken))
    expectRefused(await refresh('A'.repeat(43)))

    const suspended = await signedIn(auth)
    await auth.sql`update users set status = 'suspended' where id = ${suspended.user.id}`
    expectRefused(await refresh(suspended.refreshToken))
  })

  it('when the refresh token has its default lifetime, then it expires 14 days after it was issued', async () => {
    const session = await signedIn(auth)
    const [row] = await auth.sql<{ seconds: number }[]>`
      select extract(epoch from expires_at - created_at)::int as seconds from refresh_tokens
      where user_id = ${session.user.id}`
    expect(row?.seconds).toBe(14 * 24 * 3600)
  })

  it('when login asks for the refresh cookie, then the body has no refresh token and the cookie has exactly the refresh attributes', async () => {
    const user = await createTestUser(auth)
    const response = await login(auth, user, { query: '?refresh=cookie' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 })
    const cookies = setCookies(response.headers)
    expect(cookies).toHaveLength(1)
    expect(cookies[0]).toEqual({
      name: authNames.refreshCookie,
      value: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      attributes: {
        'max-age': String(14 * 24 * 3600),
        path: '/api/auth/refresh',
        httponly: '',
        secure: '',
        samesite: 'Strict',
      },
    })
  })

  it('when POST /api/auth/refresh gets the cookie, then it answers a new access token and rotates the cookie; the old cookie is refused', async () => {
    const user = await createTestUser(auth)
    const loggedIn = await login(auth, user, { query: '?refresh=cookie' })
    const [cookie] = setCookies(loggedIn.headers)
    const cookieRefresh = (value: string) =>
      auth.app.inject({
        method: 'POST',
        url: '/api/auth/refresh',
        cookies: { [authNames.refreshCookie]: value },
      })
    const response = await cookieRefresh(cookie?.value ?? '')
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 })
    const [rotated] = setCookies(response.headers)
    expect(rotated).toMatchObject({
      name: authNames.refreshCookie,
      attributes: { path: '/api/auth/refresh', httponly: '', secure: '', samesite: 'Strict' },
    })
    expect(rotated?.value).not.toBe(cookie?.value)

    const replay = await cookieRefresh(cookie?.value ?? '')
    expect(replay.statusCode).toBe(401)
    // the dead cookie is cleared with the same attributes
    const [cleared] = setCookies(replay.headers)
    expect(cleared).toMatchObject({
      name: authNames.refreshCookie,
      value: '',
      attributes: { path: '/api/auth/refresh', 'max-age': '0', httponly: '', secure: '', samesite: 'Strict' },
    })
    const missing = await auth.app.inject({ method: 'POST', url: '/api/auth/refresh' })
    expectRefused(missing)
  })
})
