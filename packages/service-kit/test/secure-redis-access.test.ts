// What the chassis does in Redis, done as order's own user on a secure Redis (TLS, an ACL user per service): the rate
// limiter's script, cookie sessions read, credential revocations loaded and followed, the sessions auth ends, the
// readiness PING, each connection's name. A command or key the chassis uses outside what redisAccess declares for a
// service is refused by the engine here (NOPERM), and the checks below fail with it.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  authNames,
  type CredentialRevocation,
  rateLimitKeyPrefix,
  type SessionEnded,
} from '@meridian/contracts'
import { freePort } from '@meridian/infra'
import { certificateAuthority, type SecureEngineInstance, startSecureRedis } from '@meridian/infra/secure'
import { captureLogs, eventually } from '@meridian/testkit'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sessionIdHash } from '../src/auth/index.ts'
import { createRedis, createServiceApp, type ServiceApp } from '../src/index.ts'
import { audience, hsSecret, issuer } from './auth-app.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-kit-secure-redis-'))
let secure: SecureEngineInstance
let auth: Redis
let admin: Redis
let order: Redis
let app: ServiceApp
const warnings = vi.spyOn(console, 'warn')
const revokedEarlier = randomUUID()

/** A client of `principal`'s as a service makes it: its variables, through createRedis. */
function redisOf(env: Record<string, string>, connectionName: string): Redis {
  return createRedis(env.REDIS_URL ?? '', { connectionName, tls: env })
}

/** What auth does when it revokes (services/auth: its script stores the revocation and announces it). */
async function revoke(userId: string): Promise<void> {
  const revocation: CredentialRevocation = { userId, revokedBefore: Date.now(), until: Date.now() + 60_000 }
  const text = JSON.stringify(revocation)
  await auth
    .multi()
    .set(`${authNames.revocationKeyPrefix}${userId}`, text, 'PX', 60_000)
    .publish(authNames.revocationChannel, text)
    .exec()
}

beforeAll(async () => {
  const ca = await certificateAuthority(join(dir, 'ca'))
  secure = await startSecureRedis({
    dir: join(dir, 'redis'),
    ca,
    host: '127.0.0.1',
    ports: { redis: await freePort() },
    principals: ['auth', 'order'],
  })
  auth = redisOf(secure.envFor('auth'), 'auth')
  admin = redisOf(secure.adminEnv(), 'admin')
  // stored before order starts: its follower finds it by SCAN and MGET
  await revoke(revokedEarlier)
  order = redisOf(secure.envFor('order'), 'order')
  const { stream: logStream } = captureLogs()
  app = await createServiceApp({
    name: 'order',
    version: '1.0.0',
    environment: 'test',
    logLevel: 'info',
    logStream,
    rateLimit: {
      redis: order,
      max: 3,
      timeWindowMs: 60_000,
      // every request settles with Redis: the script's answer decides at once
      syncIntervalMs: 0,
      keyGenerator: (request) => String(request.headers['x-client'] ?? request.ip),
    },
    healthChecks: {
      redis: async () => {
        await order.ping()
      },
    },
    authentication: {
      issuer,
      audience,
      jwt: { algorithm: 'HS256', secret: hsSecret },
      sessions: { redis: order },
      revocations: { redis: order },
    },
  })
  app.get('/me', { preHandler: app.authenticate }, async (request) => request.principal)
  app.get('/limited', async () => ({ ok: true }))
  await app.ready()
})

afterAll(async () => {
  warnings.mockRestore()
  await app?.close()
  for (const client of [order, auth, admin]) client?.disconnect()
  await secure?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe("the chassis' Redis, as order's own user over TLS", () => {
  it('when a request carries a cookie session auth stored, then order reads it and the principal is its user', async () => {
    const sessionId = randomUUID()
    const record = { userId: 'user-1', role: 'customer', createdAt: new Date().toISOString() }
    await auth.set(`${authNames.sessionKeyPrefix}${sessionId}`, JSON.stringify(record), 'PX', 60_000)
    const response = await app.inject({
      url: '/me',
      headers: { cookie: `${authNames.sessionCookie}=${sessionId}` },
    })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toMatchObject({ subject: 'user-1', method: 'session' })
  })

  it("when auth revokes a user, then order's follower hears it, and a revocation stored before it started was loaded", async () => {
    expect(app.credentialRevocations.revokedBefore(revokedEarlier)).toBeGreaterThan(0)
    const userId = randomUUID()
    const sessionId = randomUUID()
    const record = { userId, role: 'customer', createdAt: new Date(Date.now() - 1000).toISOString() }
    await auth.set(`${authNames.sessionKeyPrefix}${sessionId}`, JSON.stringify(record), 'PX', 60_000)
    await revoke(userId)
    await eventually('order hears the revocation', () => app.credentialRevocations.revokedBefore(userId) > 0)
    const response = await app.inject({
      url: '/me',
      headers: { cookie: `${authNames.sessionCookie}=${sessionId}` },
    })
    expect(response.statusCode).toBe(401)
  })

  it('when auth ends a session, then order hears of it', async () => {
    const heard: SessionEnded[] = []
    const stop = app.credentialRevocations.onSessionEnded((ended) => heard.push(ended))
    const ended: SessionEnded = { sessionHash: sessionIdHash(randomUUID()) }
    await auth.publish(authNames.sessionEndedChannel, JSON.stringify(ended))
    await eventually('order hears the session end', () => heard.length > 0)
    stop()
    expect(heard).toEqual([ended])
  })

  it("when a client passes the limit, then 429: the limiter's script ran under order's keys (a refused script would let every request through)", async () => {
    const client = randomUUID()
    const statuses: number[] = []
    for (let request = 0; request < 4; request++) {
      statuses.push((await app.inject({ url: '/limited', headers: { 'x-client': client } })).statusCode)
    }
    expect(statuses).toEqual([200, 200, 200, 429])
    const [, keys] = await admin.scan(
      '0',
      'MATCH',
      `${rateLimitKeyPrefix('order')}*${client}*`,
      'COUNT',
      1000,
    )
    expect(keys.length).toBeGreaterThan(0)
  })

  it('when order is asked whether it is ready, then its PING answers', async () => {
    const response = await app.inject({ url: '/health/ready' })
    expect(response.statusCode, response.body).toBe(200)
  })

  it("when order's connections are listed, then each carries its name under order's user, and each passed the ready check", async () => {
    const clients = String(await admin.client('LIST'))
      .trim()
      .split('\n')
      .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split('=', 2))))
      .filter((fields) => fields.user === 'order')
    expect(clients.map((fields) => fields.name).sort()).toEqual(['credential-revocations', 'order'])
    // ioredis' ready check asks INFO on every connection: refused, it would have warned and never made one ready
    expect(warnings.mock.calls.flat().join(' ')).not.toMatch(/ready check/i)
  })
})
