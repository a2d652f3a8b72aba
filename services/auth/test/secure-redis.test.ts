// auth on its own Redis user over TLS (a secure Redis: issue 45): its scripts — a session made and indexed, rewritten
// for the user's address, ended and announced; a revocation stored and announced —, its login throttle's counters,
// and what it follows as every service does, all within what redisAccess declares for auth; and order's user, as the
// other services follow auth, hears what auth announces.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { authNames, type SessionEnded } from '@meridian/contracts'
import { freePort } from '@meridian/infra'
import { certificateAuthority, type SecureEngineInstance, startSecureRedis } from '@meridian/infra/secure'
import { createRedis, sessionIdHash } from '@meridian/service-kit'
import { eventually } from '@meridian/testkit'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAdmin } from '../src/create-admin-command.ts'
import { createCredentialRevocationsStore } from '../src/data/credential-revocations-store.ts'
import { createSessionStore, userSessionsKeyPrefix } from '../src/data/session-store.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { createTestUser, login, randomAddress, setCookies } from './identities.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-auth-secure-redis-'))
let secure: SecureEngineInstance
let auth: AuthTestApp
let order: Redis
let follower: Redis
const announced: string[] = []

beforeAll(async () => {
  secure = await startSecureRedis({
    dir: join(dir, 'redis'),
    ca: await certificateAuthority(join(dir, 'ca')),
    host: '127.0.0.1',
    ports: { redis: await freePort() },
    principals: ['auth', 'order'],
  })
  auth = await buildAuthTestApp({ ...secure.envFor('auth'), SESSION_TTL_SECONDS: '3600' })
  const orderEnv = secure.envFor('order')
  order = createRedis(orderEnv.REDIS_URL ?? '', { connectionName: 'order', tls: orderEnv })
  follower = order.duplicate({ connectionName: 'order-follower' })
  follower.on('message', (channel: string, text: string) => announced.push(`${channel} ${text}`))
  await follower.subscribe(authNames.revocationChannel, authNames.sessionEndedChannel)
})

afterAll(async () => {
  follower?.disconnect()
  order?.disconnect()
  await auth?.close()
  await secure?.stop()
  rmSync(dir, { recursive: true, force: true })
})

async function startSession() {
  const user = await createTestUser(auth, { role: 'user' })
  const response = await login(auth, user, { query: '?mode=session' })
  expect(response.statusCode, response.body).toBe(204)
  const [cookie] = setCookies(response.headers)
  return { user, sessionId: cookie?.value ?? '' }
}

describe("auth's Redis, as auth's own user over TLS", () => {
  it('when a session starts, is rewritten and ends, then its record, its index and its announcement are all made', async () => {
    const { user, sessionId } = await startSession()
    const key = `${authNames.sessionKeyPrefix}${sessionId}`
    expect(await auth.redis.smembers(`${userSessionsKeyPrefix}${user.id}`)).toEqual([sessionId])
    const read = await auth.app.inject({
      url: `/api/v1/users/${user.id}`,
      cookies: { [authNames.sessionCookie]: sessionId },
    })
    expect(read.statusCode, read.body).toBe(200)

    expect(await createSessionStore(auth.redis).setEmailVerified(user.id, true)).toBe(1)
    expect(JSON.parse((await auth.redis.get(key)) ?? '{}').emailVerified).toBe(true)

    const logout = await auth.app.inject({
      method: 'POST',
      url: '/logout',
      cookies: { [authNames.sessionCookie]: sessionId },
    })
    expect(logout.statusCode).toBe(204)
    expect(await auth.redis.exists(key)).toBe(0)
    const ended: SessionEnded = { sessionHash: sessionIdHash(sessionId) }
    const heard = `${authNames.sessionEndedChannel} ${JSON.stringify(ended)}`
    await eventually("order's user hears the end", () => announced.includes(heard))
  })

  it("when a revocation is delivered, then it is stored and announced, and order's user reads and hears it", async () => {
    const userId = randomUUID()
    const revocation = { userId, revokedBefore: Date.now(), until: Date.now() + 60_000 }
    expect(await createCredentialRevocationsStore(auth.redis).publish(revocation)).toBe(true)
    const text = JSON.stringify(revocation)
    await eventually("order's user hears the revocation", () =>
      announced.includes(`${authNames.revocationChannel} ${text}`),
    )
    expect(await order.get(`${authNames.revocationKeyPrefix}${userId}`)).toBe(text)
    await eventually(
      'auth follows its own revocation',
      () => auth.app.credentialRevocations.revokedBefore(userId) > 0,
    )
  })

  it('when logins fail, then the throttle counts them under auth’s keys', async () => {
    const user = await createTestUser(auth)
    const remoteAddress = randomAddress()
    for (let attempt = 0; attempt < 2; attempt++) {
      const failed = await login(auth, { email: user.email, password: 'not-the-password' }, { remoteAddress })
      expect(failed.statusCode).toBe(401)
    }
    expect(await auth.redis.get(`auth:login-failures:address:${remoteAddress}`)).toBe('2')
  })

  it("when create-admin runs with auth's variables, then the promotion's revocation reaches Redis; a TLS file it cannot read stops it, named", async () => {
    const user = await createTestUser(auth)
    const env = secure.envFor('auth')
    const noPassword = async (): Promise<string> => {
      throw new Error('no password should have been asked for')
    }
    const request = { databaseUrl: auth.database.url, redisUrl: env.REDIS_URL ?? '', email: user.email }
    const outcome = await createAdmin({ ...request, redisTls: env, password: noPassword })
    expect(outcome).toMatchObject({ action: 'promoted', user: { id: user.id } })
    await eventually("the promotion's revocation is announced", () =>
      announced.some((text) => text.startsWith(authNames.revocationChannel) && text.includes(user.id)),
    )
    const missing = join(dir, 'missing-ca.pem')
    await expect(
      createAdmin({ ...request, redisTls: { REDIS_TLS_CA: missing }, password: noPassword }),
    ).rejects.toThrow(`REDIS_TLS_CA: cannot read '${missing}' (ENOENT)`)
  })

  it('when auth ran, then it logged no refusal of Redis', () => {
    expect(auth.logs.filter((line) => /NOPERM|NOAUTH|WRONGPASS/.test(JSON.stringify(line)))).toEqual([])
  })
})
