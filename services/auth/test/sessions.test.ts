// Cookie sessions: POST /login?mode=session sets the session cookie and stores the session in Redis; POST /logout ends it.
import { authNames, type SessionEnded } from '@meridian/contracts'
import { sessionIdHash } from '@meridian/service-kit'
import { eventually, infraEndpoints } from '@meridian/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { createTestUser, login, setCookies } from './identities.ts'

describe('cookie sessions', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp({ SESSION_TTL_SECONDS: '3600' })
  })
  afterAll(async () => {
    await auth.close()
  })

  async function startSession() {
    const user = await createTestUser(auth, { role: 'user' })
    const response = await login(auth, user, { query: '?mode=session' })
    const [cookie] = setCookies(response.headers)
    return { user, response, sessionId: cookie?.value ?? '' }
  }

  const readSelf = (userId: string, sessionId: string) =>
    auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${userId}`,
      cookies: { [authNames.sessionCookie]: sessionId },
    })

  it('when login asks for a session, then 204, no tokens, and the session cookie has exactly Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age', async () => {
    const { response } = await startSession()
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    const cookies = setCookies(response.headers)
    expect(cookies).toEqual([
      {
        name: 'meridian_session',
        value: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        attributes: { 'max-age': '3600', path: '/', httponly: '', secure: '', samesite: 'Lax' },
      },
    ])
  })

  it('when a session starts, then Redis holds {userId, role, createdAt, emailVerified} under the session key with the session lifetime', async () => {
    const before = Date.now()
    const { user, sessionId } = await startSession()
    const after = Date.now()
    const key = `${authNames.sessionKeyPrefix}${sessionId}`
    const record = JSON.parse((await auth.redis.get(key)) ?? 'null')
    // a user made without a verified address (email-verification.test.ts follows the record as that changes)
    expect(record).toEqual({
      userId: user.id,
      role: 'user',
      createdAt: expect.any(String),
      emailVerified: false,
    })
    // made by the login: between the moments before and after it
    expect(Date.parse(record.createdAt)).toBeGreaterThanOrEqual(before)
    expect(Date.parse(record.createdAt)).toBeLessThanOrEqual(after)
    const ttl = await auth.redis.ttl(key)
    expect(ttl).toBeGreaterThan(3500)
    expect(ttl).toBeLessThanOrEqual(3600)
  })

  it('when the session cookie is sent, then it authenticates; after logout it does not, the Redis key is gone and the cookie is cleared', async () => {
    const { user, sessionId } = await startSession()
    expect((await readSelf(user.id, sessionId)).statusCode).toBe(200)

    const logout = await auth.app.inject({
      method: 'POST',
      url: '/logout',
      cookies: { [authNames.sessionCookie]: sessionId },
    })
    expect(logout.statusCode).toBe(204)
    expect(setCookies(logout.headers)).toEqual([
      {
        name: 'meridian_session',
        value: '',
        attributes: {
          'max-age': '0',
          expires: 'Thu, 01 Jan 1970 00:00:00 GMT',
          path: '/',
          httponly: '',
          secure: '',
          samesite: 'Lax',
        },
      },
    ])
    expect(await auth.redis.exists(`${authNames.sessionKeyPrefix}${sessionId}`)).toBe(0)
    expect((await readSelf(user.id, sessionId)).statusCode).toBe(401)
  })

  it("when a session is logged out, then its end is announced on the sessions-ended channel by its id's hash, never the id; a logout without a session announces nothing", async () => {
    const listener = new Redis(infraEndpoints().redisUrl)
    const announced: string[] = []
    listener.on('message', (_channel: string, text: string) => announced.push(text))
    try {
      await listener.subscribe(authNames.sessionEndedChannel)
      const { sessionId } = await startSession()
      const logout = (id: string) =>
        auth.app.inject({ method: 'POST', url: '/logout', cookies: { [authNames.sessionCookie]: id } })
      // first a logout of nothing, then the real one, then the same again: only the real one is announced
      expect((await logout('no-such-session')).statusCode).toBe(204)
      expect((await logout(sessionId)).statusCode).toBe(204)
      expect((await logout(sessionId)).statusCode).toBe(204)
      const expected: SessionEnded = { sessionHash: sessionIdHash(sessionId) }
      await eventually(
        'the end is announced',
        () => announced.includes(JSON.stringify(expected)),
        undefined,
        20,
      )
      // other test files' logouts may be announced on the same channel meanwhile; none of them is this one's
      expect(announced.filter((text) => text === JSON.stringify(expected))).toHaveLength(1)
      expect(announced.some((text) => text.includes(sessionId))).toBe(false)
      expect(announced).not.toContain(JSON.stringify({ sessionHash: sessionIdHash('no-such-session') }))
    } finally {
      listener.disconnect()
    }
  })

  it('when logout comes without a session cookie, or with one already ended, then 204 as well (idempotent)', async () => {
    expect((await auth.app.inject({ method: 'POST', url: '/logout' })).statusCode).toBe(204)
    const again = await auth.app.inject({
      method: 'POST',
      url: '/logout',
      cookies: { [authNames.sessionCookie]: 'no-such-session' },
    })
    expect(again.statusCode).toBe(204)
  })

  it('when a session user reads someone else, then 403: the session carries only its own user', async () => {
    const { sessionId } = await startSession()
    const other = await createTestUser(auth)
    expect((await readSelf(other.id, sessionId)).statusCode).toBe(403)
  })
})
