// The auth service's failure paths: database faults, dependencies down, rate limits, log hygiene, request ids.
import { randomUUID } from 'node:crypto'
import { createDatabase } from '@meridian/db'
import { expectErrorEnvelope, infraEndpoints } from '@meridian/testkit'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { loadAuthConfig } from '../src/config.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor } from './identities.ts'

const json = { 'content-type': 'application/json' }

describe('auth: failures', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp({ RATE_LIMIT_MAX: '5' })
  })
  afterAll(async () => {
    await auth.close()
  })

  it('when the database fails in a way no mapping knows, then 500 DB_ERROR with a generic message, logged with the cause', async () => {
    await auth.sql`alter table users rename to users_moved`
    try {
      const response = await auth.app.inject({
        method: 'GET',
        url: '/api/v1/users',
        headers: { 'x-request-id': 'db-fault-1', ...bearerFor(auth, { role: 'admin' }) },
        remoteAddress: '10.0.0.1',
      })
      expect(expectErrorEnvelope(response, 500, 'DB_ERROR')).toMatchObject({
        message: 'A database error occurred',
        requestId: 'db-fault-1',
      })
      expect(response.body).not.toContain('users')
      const logged = auth.logs.find((line) => line.requestId === 'db-fault-1' && line.level === 50)
      expect(JSON.stringify(logged)).toContain('relation')
    } finally {
      await auth.sql`alter table users_moved rename to users`
    }
  })

  it('when one client sends more than the limit, then 429 RATE_LIMITED with Retry-After, while another client is served', async () => {
    const client = `10.1.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`
    const admin = bearerFor(auth, { role: 'admin' })
    const statuses: number[] = []
    let last: Awaited<ReturnType<typeof auth.app.inject>> | undefined
    for (let i = 0; i < 6; i++) {
      last = await auth.app.inject({
        method: 'GET',
        url: '/api/v1/users?limit=1',
        headers: admin,
        remoteAddress: client,
      })
      statuses.push(last.statusCode)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect(last?.headers['retry-after']).toMatch(/^\d+$/)
    expect(last?.headers['x-ratelimit-limit']).toBe('5')
    if (!last) throw new Error('no request was sent')
    expect(expectErrorEnvelope(last, 429, 'RATE_LIMITED').retryAfter).toBe(
      Number(last?.headers['retry-after']),
    )
    const other = await auth.app.inject({
      method: 'GET',
      url: '/api/v1/users?limit=1',
      headers: admin,
      remoteAddress: '10.2.0.1',
    })
    expect(other.statusCode).toBe(200)
  })

  it('when a request with a bearer token, a cookie and a password is logged, then the log shows none of them', async () => {
    const password = `pw-${randomUUID()}`
    const token = `tok-${randomUUID()}`
    await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: { ...json, authorization: `Bearer ${token}`, cookie: `sid=${token}-cookie` },
      payload: { name: 'Logged', email: `logged.${randomUUID().slice(0, 6)}@example.com`, password, age: 40 },
      remoteAddress: '10.3.0.1',
    })
    await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: { ...json, authorization: `Bearer ${token}` },
      payload: { name: '', email: 'bad', password, age: 3 },
      remoteAddress: '10.3.0.1',
    })
    const text = JSON.stringify(auth.logs)
    expect(text).toContain('request completed')
    expect(text).not.toContain(password)
    expect(text).not.toContain(token)
  })
})

describe('auth: health with a dependency down', () => {
  it('when PostgreSQL cannot be reached, then /health and /health/ready answer 503 naming the database, liveness stays 200', async () => {
    const sql = createDatabase('postgres://postgres:postgres@127.0.0.1:1/auth', { connectTimeoutSeconds: 1 })
    const redis = new Redis(infraEndpoints().redisUrl)
    const config = loadAuthConfig({
      NODE_ENV: 'test',
      PORT: '0',
      REDIS_URL: infraEndpoints().redisUrl,
      LOG_LEVEL: 'silent',
      // the other auth test apps count their requests from 127.0.0.1 under the same key: the default limit (300 a
      // minute) could answer 429 before the database is ever asked
      RATE_LIMIT_MAX: '100000',
    })
    const app = await buildApp({ config, sql, redis })
    try {
      const health = await app.inject({ method: 'GET', url: '/health' })
      expect(health.statusCode).toBe(503)
      expect(health.json()).toMatchObject({ status: 'degraded', checks: { redis: 'ok' } })
      expect(health.json().checks.database).not.toBe('ok')
      const ready = await app.inject({ method: 'GET', url: '/health/ready' })
      expect(ready.statusCode).toBe(503)
      expect(ready.json().status).toBe('not_ready')
      expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)
      // a request that needs the database (registration needs no credentials): 503 with Retry-After, no address or stack
      const list = await app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: json,
        payload: {
          name: 'Nobody',
          email: `nobody.${randomUUID().slice(0, 6)}@example.com`,
          password: 'long enough pw',
        },
      })
      expect(expectErrorEnvelope(list, 503, 'SERVICE_UNAVAILABLE').message).toBe(
        'Service temporarily unavailable',
      )
      expect(list.headers['retry-after']).toBe('5')
      expect(list.body).not.toContain('127.0.0.1:1')
    } finally {
      await app.close()
      redis.disconnect()
      await sql.end({ timeout: 1 })
    }
  })
})
