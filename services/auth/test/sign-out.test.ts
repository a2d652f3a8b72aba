// Signing out with tokens: POST /logout with a refresh token (or its cookie), and DELETE /api/auth/refresh for the
// cookie mode, revoke the token's whole family; an unknown or already revoked token gets the same answer.
import { randomBytes } from 'node:crypto'
import { authNames } from '@meridian/contracts'
import { expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { createTestUser, login, setCookies, signedIn } from './identities.ts'

const json = { 'content-type': 'application/json' }

describe('signing out with tokens', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp()
  })
  afterAll(async () => {
    await auth.close()
  })

  const refresh = (refreshToken: string) =>
    auth.app.inject({ method: 'POST', url: '/refresh', headers: json, payload: { refreshToken } })
  const logout = (payload?: unknown, cookies: Record<string, string> = {}) =>
    auth.app.inject({
      method: 'POST',
      url: '/logout',
      cookies,
      ...(payload === undefined ? {} : { headers: json, payload: JSON.stringify(payload) }),
    })
  const liveTokensOf = async (userId: string) => {
    const [row] = await auth.sql<{ live: number }[]>`
      select count(*)::int as live from refresh_tokens where user_id = ${userId} and revoked_at is null`
    return row?.live
  }

  it('when a client signs out with its refresh token, then 204 and the token is refused by /refresh from then on', async () => {
    const session = await signedIn(auth)
    const out = await logout({ refreshToken: session.refreshToken })
    expect(out.statusCode).toBe(204)
    expect(out.body).toBe('')
    expect(expectErrorEnvelope(await refresh(session.refreshToken), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid or expired refresh token',
    )
    expect(await liveTokensOf(session.user.id)).toBe(0)
  })

  it("when the token sent is an already spent member of its family, then the family's newer member is refused too", async () => {
    const session = await signedIn(auth)
    const rotated = await refresh(session.refreshToken)
    expect(rotated.statusCode).toBe(200)
    const newest = rotated.json().refreshToken as string

    expect((await logout({ refreshToken: session.refreshToken })).statusCode).toBe(204)

    expect((await refresh(newest)).statusCode).toBe(401)
    expect(await liveTokensOf(session.user.id)).toBe(0)
  })

  it("when a user signs out of one login, then their other logins' refresh tokens and the access token keep working", async () => {
    const user = await createTestUser(auth)
    const first = (await login(auth, user)).json()
    const second = (await login(auth, user)).json()

    expect((await logout({ refreshToken: first.refreshToken })).statusCode).toBe(204)

    expect((await refresh(first.refreshToken)).statusCode).toBe(401)
    expect((await refresh(second.refreshToken)).statusCode).toBe(200)
    // an access token is not revoked by signing out: it lives until it expires (ACCESS_TOKEN_TTL_SECONDS)
    const self = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${user.id}`,
      headers: { authorization: `Bearer ${first.accessToken}` },
    })
    expect(self.statusCode).toBe(200)
  })

  it('when the token is unknown or already revoked, then the same 204 with nothing revealed, and nothing else changes', async () => {
    const bystander = await signedIn(auth)
    const known = await signedIn(auth)
    const answers = [
      await logout({ refreshToken: known.refreshToken }),
      await logout({ refreshToken: known.refreshToken }),
      await logout({ refreshToken: randomBytes(32).toString('base64url') }),
      await logout({ refreshToken: 'x' }),
      await logout({}),
      await logout(),
    ]
    for (const answer of answers) {
      expect(answer.statusCode).toBe(204)
      expect(answer.body).toBe('')
      expect(setCookies(answer.headers).map((cookie) => cookie.name)).toEqual([authNames.sessionCookie])
    }
    expect((await refresh(bystander.refreshToken)).statusCode).toBe(200)
  })

  it('when the body is not the documented one (another field, a token too long, not a string), then 422 naming it, and nothing is revoked', async () => {
    const session = await signedIn(auth)
    const refused = [
      { refreshToken: session.refreshToken, userId: session.user.id },
      { refreshToken: 'x'.repeat(513) },
      { refreshToken: 42 },
      { refreshToken: '' },
    ]
    for (const payload of refused) {
      const details = expectErrorEnvelope(await logout(payload), 422, 'VALIDATION_ERROR').details ?? []
      expect(details.length).toBeGreaterThan(0)
    }
    expect((await refresh(session.refreshToken)).statusCode).toBe(200)
  })

  it('when a session cookie and a refresh token are sent together, then both end', async () => {
    const user = await createTestUser(auth)
    const tokens = (await login(auth, user)).json()
    const started = await login(auth, user, { query: '?mode=session' })
    const sessionId = setCookies(started.headers).find(
      (cookie) => cookie.name === authNames.sessionCookie,
    )?.value
    expect(sessionId).toBeTruthy()

    const out = await logout(
      { refreshToken: tokens.refreshToken },
      { [authNames.sessionCookie]: sessionId ?? '' },
    )
    expect(out.statusCode).toBe(204)
    expect(await auth.redis.exists(`${authNames.sessionKeyPrefix}${sessionId}`)).toBe(0)
    expect((await refresh(tokens.refreshToken)).statusCode).toBe(401)
  })

  describe('the refresh-token cookie', () => {
    async function cookieLogin() {
      const user = await createTestUser(auth)
      const answer = await login(auth, user, { query: '?refresh=cookie' })
      const cookie = setCookies(answer.headers).find((each) => each.name === authNames.refreshCookie)
      if (!cookie) throw new Error('no refresh cookie')
      return { user, token: cookie.value }
    }
    const cookieRefresh = (token: string) =>
      auth.app.inject({
        method: 'POST',
        url: authNames.refreshCookiePath,
        cookies: { [authNames.refreshCookie]: token },
      })

    it('when DELETE /api/auth/refresh carries the cookie, then 204, the cookie is cleared on its path and its family is refused', async () => {
      const { user, token } = await cookieLogin()
      const rotated = await cookieRefresh(token)
      expect(rotated.statusCode).toBe(200)
      const newest =
        setCookies(rotated.headers).find((each) => each.name === authNames.refreshCookie)?.value ?? ''

      // the browser sends its newest cookie
      const out = await auth.app.inject({
        method: 'DELETE',
        url: authNames.refreshCookiePath,
        cookies: { [authNames.refreshCookie]: newest },
      })
      expect(out.statusCode).toBe(204)
      expect(setCookies(out.headers)).toEqual([
        {
          name: authNames.refreshCookie,
          value: '',
          attributes: {
            'max-age': '0',
            expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
            path: authNames.refreshCookiePath,
            httponly: '',
            secure: '',
            samesite: 'Strict',
          },
        },
      ])
      expect((await cookieRefresh(newest)).statusCode).toBe(401)
      expect(await liveTokensOf(user.id)).toBe(0)
    })

    it('when DELETE /api/auth/refresh comes without a cookie or with an unknown one, then 204 as well', async () => {
      expect((await auth.app.inject({ method: 'DELETE', url: authNames.refreshCookiePath })).statusCode).toBe(
        204,
      )
      const unknown = await auth.app.inject({
        method: 'DELETE',
        url: authNames.refreshCookiePath,
        cookies: { [authNames.refreshCookie]: randomBytes(32).toString('base64url') },
      })
      expect(unknown.statusCode).toBe(204)
    })

    it('when a client sends the refresh cookie to POST /logout, then its family is revoked and the cookie cleared there too', async () => {
      const { token } = await cookieLogin()
      const out = await logout(undefined, { [authNames.refreshCookie]: token })
      expect(out.statusCode).toBe(204)
      expect(setCookies(out.headers).map((cookie) => [cookie.name, cookie.attributes.path])).toEqual([
        [authNames.sessionCookie, '/'],
        [authNames.refreshCookie, authNames.refreshCookiePath],
      ])
      expect((await cookieRefresh(token)).statusCode).toBe(401)
    })
  })
})
