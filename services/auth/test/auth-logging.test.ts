// What auth logs while credentials pass through it: never a password, an access or refresh token, or a cookie value.
import { authNames } from '@meridian/contracts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { createTestUser, login, setCookies } from './identities.ts'

describe('auth: credentials in logs', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp({ LOG_LEVEL: 'debug' })
  })
  afterAll(async () => {
    await auth.close()
  })

  it('when users log in, refresh (body and cookie), reuse a token, use a session and log out, then the logs hold none of the secrets', async () => {
    const secrets: string[] = []
    const user = await createTestUser(auth)
    secrets.push(user.password)

    await login(auth, { email: user.email, password: `${user.password}-wrong` })
    secrets.push(`${user.password}-wrong`)

    const pair = (await login(auth, user)).json()
    secrets.push(pair.accessToken, pair.refreshToken)
    const refreshed = await auth.app.inject({
      method: 'POST',
      url: '/refresh',
      headers: { 'content-type': 'application/json' },
      payload: { refreshToken: pair.refreshToken },
    })
    secrets.push(refreshed.json().accessToken, refreshed.json().refreshToken)
    // reuse: logged as a warning, without the token
    await auth.app.inject({
      method: 'POST',
      url: '/refresh',
      headers: { 'content-type': 'application/json' },
      payload: { refreshToken: pair.refreshToken },
    })

    const withCookie = await login(auth, user, { query: '?refresh=cookie' })
    const refreshCookie = setCookies(withCookie.headers)[0]?.value ?? ''
    secrets.push(withCookie.json().accessToken, refreshCookie)
    const cookieRefresh = await auth.app.inject({
      method: 'POST',
      url: '/api/auth/refresh',
      cookies: { [authNames.refreshCookie]: refreshCookie },
    })
    secrets.push(setCookies(cookieRefresh.headers)[0]?.value ?? '', cookieRefresh.json().accessToken)

    const session = await login(auth, user, { query: '?mode=session' })
    const sessionId = setCookies(session.headers)[0]?.value ?? ''
    secrets.push(sessionId)
    await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${user.id}`,
      cookies: { [authNames.sessionCookie]: sessionId },
    })
    await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${user.id}`,
      headers: { authorization: `Bearer ${pair.accessToken}` },
    })
    await auth.app.inject({
      method: 'POST',
      url: '/logout',
      cookies: { [authNames.sessionCookie]: sessionId },
    })

    expect(secrets.every((secret) => secret.length >= 20)).toBe(true)
    const text = JSON.stringify(auth.logs)
    expect(auth.logs.filter((line) => line.msg === 'request completed').length).toBeGreaterThanOrEqual(9)
    expect(text).toContain('refresh token reused')
    for (const secret of secrets) expect(text).not.toContain(secret)
  })
})
