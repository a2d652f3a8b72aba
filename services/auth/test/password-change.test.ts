// PUT /api/v1/users/{id}/password: yours with the current password, anyone's as an admin; every earlier credential
// of the user stops working.
import { authNames } from '@meridian/contracts'
import { expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor, login, randomAddress, setCookies, signedIn } from './identities.ts'

let auth: AuthTestApp
beforeAll(async () => {
  auth = await buildAuthTestApp()
})
afterAll(async () => {
  await auth?.close()
})

const changePassword = (userId: string, headers: Record<string, string>, payload: Record<string, unknown>) =>
  auth.app.inject({
    method: 'PUT',
    url: `/api/v1/users/${userId}/password`,
    headers: { 'content-type': 'application/json', ...headers },
    payload,
    remoteAddress: randomAddress(),
  })

describe('changing a password', () => {
  it('when a user gives the current password, then 204; the old password, token, session and refresh token stop, the new password works', async () => {
    const user = await signedIn(auth)
    const session = await login(auth, user.user, { query: '?mode=session' })
    const sessionId = setCookies(session.headers)[0]?.value ?? ''

    const changed = await changePassword(user.user.id, user.headers, {
      currentPassword: user.user.password,
      newPassword: 'a brand new passphrase',
    })
    expect(changed.statusCode).toBe(204)

    const self = (headers: Record<string, string>, cookies: Record<string, string> = {}) =>
      auth.app.inject({ method: 'GET', url: `/api/v1/users/${user.user.id}`, headers, cookies })
    expect(expectErrorEnvelope(await self(user.headers), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid or expired token',
    )
    expectErrorEnvelope(await self({}, { [authNames.sessionCookie]: sessionId }), 401, 'UNAUTHORIZED')
    const refreshed = await auth.app.inject({
      method: 'POST',
      url: '/refresh',
      headers: { 'content-type': 'application/json' },
      payload: { refreshToken: user.refreshToken },
    })
    expect(refreshed.statusCode).toBe(401)
    expect((await login(auth, user.user)).statusCode).toBe(401)
    const again = await login(auth, { email: user.user.email, password: 'a brand new passphrase' })
    expect(again.statusCode).toBe(200)
    expect((await self({ authorization: `Bearer ${again.json().accessToken}` })).statusCode).toBe(200)
  })

  it('when a user gives a wrong current password, then 403 and nothing changes; repeated, the login throttle answers 429', async () => {
    const user = await signedIn(auth)
    const wrong = await changePassword(user.user.id, user.headers, {
      currentPassword: 'not my password',
      newPassword: 'whatever else entirely',
    })
    expect(expectErrorEnvelope(wrong, 403, 'FORBIDDEN').message).toBe('The current password is incorrect')
    expect((await login(auth, user.user)).statusCode).toBe(200)
    let last = wrong
    for (let attempt = 0; attempt < 6; attempt++) {
      last = await changePassword(user.user.id, user.headers, {
        currentPassword: `wrong ${attempt}`,
        newPassword: 'whatever else entirely',
      })
    }
    expectErrorEnvelope(last, 429, 'RATE_LIMITED')
  })

  it('when a user omits the current password, then 422 naming currentPassword', async () => {
    const user = await signedIn(auth)
    const response = await changePassword(user.user.id, user.headers, { newPassword: 'long enough now' })
    expectErrorEnvelope(response, 422, 'VALIDATION_ERROR')
    expect(JSON.stringify(response.json())).toContain('currentPassword')
  })

  it("when someone changes another user's password, then 403; an admin may, without the current password", async () => {
    const victim = await signedIn(auth)
    const other = await signedIn(auth)
    const refused = await changePassword(victim.user.id, other.headers, {
      currentPassword: other.user.password,
      newPassword: 'taken over account',
    })
    expectErrorEnvelope(refused, 403, 'FORBIDDEN')

    const admin = bearerFor(auth, { role: 'admin' })
    expect(
      (await changePassword(victim.user.id, admin, { newPassword: 'reset by an admin' })).statusCode,
    ).toBe(204)
    expect((await login(auth, { email: victim.user.email, password: 'reset by an admin' })).statusCode).toBe(
      200,
    )
  })

  it('when the caller uses an API key, then changing their own password is refused with 403', async () => {
    const user = await signedIn(auth)
    const key = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: user.headers,
      payload: { name: 'bot', scopes: ['users:write'] },
    })
    const response = await changePassword(
      user.user.id,
      { 'x-api-key': key.json().key },
      {
        currentPassword: user.user.password,
        newPassword: 'taken over by a key',
      },
    )
    expect(expectErrorEnvelope(response, 403, 'FORBIDDEN').message).toBe('API keys cannot change passwords')
  })

  it('when there is no credential, or the new password is too short or holds NUL, then 401 / 422', async () => {
    const user = await signedIn(auth)
    expect((await changePassword(user.user.id, {}, { newPassword: 'long enough now' })).statusCode).toBe(401)
    for (const newPassword of ['short', 'long \u0000 enough']) {
      const response = await changePassword(user.user.id, user.headers, {
        currentPassword: user.user.password,
        newPassword,
      })
      expectErrorEnvelope(response, 422, 'VALIDATION_ERROR')
    }
  })
})
