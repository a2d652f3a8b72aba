// Rights taken away take effect at once: a user suspended, demoted or deleted loses what their bearer token, cookie
// session, API key and refresh token allowed, in auth and in every service that follows auth's revocations.
import { authNames } from '@meridian/contracts'
import { expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor, login, type SignedIn, setCookies, signedIn } from './identities.ts'

let auth: AuthTestApp
let root: { authorization: string }
beforeAll(async () => {
  auth = await buildAuthTestApp({ SESSION_TTL_SECONDS: '28800' })
  root = bearerFor(auth, { role: 'admin' })
})
afterAll(async () => {
  await auth?.close()
})

const json = { 'content-type': 'application/json' }

/** An admin signed in three ways at once: bearer token (with its refresh token), cookie session and API key. */
async function adminWithEveryCredential(): Promise<SignedIn & { sessionId: string; apiKey: string }> {
  const admin = await signedIn(auth, { role: 'admin' })
  const session = await login(auth, admin.user, { query: '?mode=session' })
  const sessionId = setCookies(session.headers).find(
    (cookie) => cookie.name === authNames.sessionCookie,
  )?.value
  const key = await auth.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: admin.headers,
    payload: { name: 'ops', scopes: ['users:read', 'users:write', 'admin:write'] },
  })
  expect(key.statusCode).toBe(201)
  return { ...admin, sessionId: sessionId ?? '', apiKey: key.json().key }
}

type Credential = 'bearer' | 'session' | 'apiKey'

function listUsersWith(admin: Awaited<ReturnType<typeof adminWithEveryCredential>>, credential: Credential) {
  return auth.app.inject({
    method: 'GET',
    url: '/api/v1/users?limit=1',
    headers:
      credential === 'bearer' ? admin.headers : credential === 'apiKey' ? { 'x-api-key': admin.apiKey } : {},
    cookies: credential === 'session' ? { [authNames.sessionCookie]: admin.sessionId } : {},
  })
}

const change = (userId: string, payload: Record<string, unknown>) =>
  auth.app.inject({ method: 'PATCH', url: `/api/v1/users/${userId}`, headers: { ...root, ...json }, payload })

const refresh = (refreshToken: string) =>
  auth.app.inject({ method: 'POST', url: '/refresh', headers: json, payload: { refreshToken } })

describe('revoking rights', () => {
  it('when an admin is suspended, then at once their bearer token, session and API key answer 401, and their refresh token is refused', async () => {
    const admin = await adminWithEveryCredential()
    for (const credential of ['bearer', 'session', 'apiKey'] as const) {
      expect((await listUsersWith(admin, credential)).statusCode).toBe(200)
    }

    expect((await change(admin.user.id, { status: 'suspended' })).statusCode).toBe(200)

    expect(expectErrorEnvelope(await listUsersWith(admin, 'bearer'), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid or expired token',
    )
    expect(expectErrorEnvelope(await listUsersWith(admin, 'session'), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid session',
    )
    expect(expectErrorEnvelope(await listUsersWith(admin, 'apiKey'), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid API key',
    )
    expect((await refresh(admin.refreshToken)).statusCode).toBe(401)
    const [revoked] = await auth.sql<{ live: number }[]>`
      select count(*)::int as live from refresh_tokens where user_id = ${admin.user.id} and revoked_at is null`
    expect(revoked?.live).toBe(0)
  })

  it('when an admin is demoted, then their old token and session stop, their API key acts with the new role (403), and a new login works as a user', async () => {
    const admin = await adminWithEveryCredential()
    expect((await listUsersWith(admin, 'session')).statusCode).toBe(200)
    // the key holds admin:write: with the admin's role it changes another user's account
    const other = await signedIn(auth)
    const renameOther = (name: string) =>
      auth.app.inject({
        method: 'PATCH',
        url: `/api/v1/users/${other.user.id}`,
        headers: { 'x-api-key': admin.apiKey, ...json },
        payload: { name },
      })
    expect((await renameOther('Renamed by a key')).statusCode).toBe(200)

    expect((await change(admin.user.id, { role: 'user' })).statusCode).toBe(200)

    expect(expectErrorEnvelope(await listUsersWith(admin, 'bearer'), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid or expired token',
    )
    expect(expectErrorEnvelope(await listUsersWith(admin, 'session'), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid session',
    )
    expect(expectErrorEnvelope(await listUsersWith(admin, 'apiKey'), 403, 'FORBIDDEN').message).toBe(
      'Insufficient permissions',
    )
    // its scopes are unchanged, but they never grant more than the owner's role now: the admin operation is gone
    expectErrorEnvelope(await renameOther('Renamed again'), 403, 'FORBIDDEN')

    // signing in again right away (within the revocation's second) gives a token that works, with the new role
    const again = await login(auth, admin.user)
    expect(again.statusCode).toBe(200)
    const headers = { authorization: `Bearer ${again.json().accessToken}` }
    expect(
      (await auth.app.inject({ method: 'GET', url: `/api/v1/users/${admin.user.id}`, headers })).statusCode,
    ).toBe(200)
    expect((await auth.app.inject({ method: 'GET', url: '/api/v1/users', headers })).statusCode).toBe(403)
  })

  it('when a user is deleted, then their session no longer reads /api/v1/api-keys, and their token and key answer 401', async () => {
    const admin = await adminWithEveryCredential()
    const readKeys = (credential: Credential) =>
      auth.app.inject({
        method: 'GET',
        url: '/api/v1/api-keys',
        headers:
          credential === 'bearer'
            ? admin.headers
            : credential === 'apiKey'
              ? { 'x-api-key': admin.apiKey }
              : {},
        cookies: credential === 'session' ? { [authNames.sessionCookie]: admin.sessionId } : {},
      })
    expect((await readKeys('session')).statusCode).toBe(200)

    const removed = await auth.app.inject({
      method: 'DELETE',
      url: `/api/v1/users/${admin.user.id}`,
      headers: root,
    })
    expect(removed.statusCode).toBe(204)

    expect(expectErrorEnvelope(await readKeys('session'), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid session',
    )
    expect(expectErrorEnvelope(await readKeys('bearer'), 401, 'UNAUTHORIZED').message).toBe(
      'Invalid or expired token',
    )
    expect(expectErrorEnvelope(await readKeys('apiKey'), 401, 'UNAUTHORIZED').message).toBe('Invalid API key')
  })

  it('when a user is revoked, then the revocation is stored in Redis for the other services, for as long as a session lives', async () => {
    const user = await signedIn(auth)
    const before = Date.now()
    expect((await change(user.user.id, { status: 'inactive' })).statusCode).toBe(200)
    const after = Date.now()
    const key = `${authNames.revocationKeyPrefix}${user.user.id}`
    const stored = JSON.parse((await auth.redis.get(key)) ?? 'null')
    expect(stored).toEqual({
      userId: user.user.id,
      revokedBefore: expect.any(Number),
      until: expect.any(Number),
    })
    // made by the change: between the moments before and after it
    expect(stored.revokedBefore).toBeGreaterThanOrEqual(before)
    expect(stored.revokedBefore).toBeLessThanOrEqual(after)
    expect(stored.until - stored.revokedBefore).toBeGreaterThanOrEqual(28_800_000)
    expect(await auth.redis.pttl(key)).toBeGreaterThan(28_700_000)
  })

  it('when a change neither sets a role nor takes the user out of active (a name), then nothing is revoked', async () => {
    const user = await signedIn(auth)
    expect((await change(user.user.id, { name: 'Still Me' })).statusCode).toBe(200)
    const self = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${user.user.id}`,
      headers: user.headers,
    })
    expect(self.statusCode).toBe(200)
    expect(await auth.redis.exists(`${authNames.revocationKeyPrefix}${user.user.id}`)).toBe(0)
    expect((await refresh(user.refreshToken)).statusCode).toBe(200)
  })
})
