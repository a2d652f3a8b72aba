// Health, metrics, OpenAPI and Redis-backed rate limits of the chassis, on real Redis.
import { eventually, expectErrorEnvelope, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { metricsFormat } from '../src/metrics.ts'
import { buildChassisApp, type ChassisApp } from './chassis-app.ts'

/** What Prometheus sends when it scrapes (its default scrape protocols). */
const prometheusAccept =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'

describe('metricsFormat', () => {
  it('when ?format is given, then it wins over Accept and the default', () => {
    expect(metricsFormat('json', 'text/plain', 'prometheus')).toBe('json')
    expect(metricsFormat('prometheus', 'application/json', 'json')).toBe('prometheus')
  })

  it('when Accept prefers one format (by q), then that one; when it weighs both the same or neither, then the default', () => {
    expect(metricsFormat(undefined, prometheusAccept, 'json')).toBe('prometheus')
    expect(metricsFormat(undefined, 'application/openmetrics-text', 'json')).toBe('prometheus')
    expect(metricsFormat(undefined, 'text/*', 'json')).toBe('prometheus')
    expect(metricsFormat(undefined, 'application/json, text/plain;q=0.5', 'prometheus')).toBe('json')
    expect(metricsFormat(undefined, 'APPLICATION/JSON', 'prometheus')).toBe('json')
    expect(metricsFormat(undefined, 'text/plain;q=0, */*', 'prometheus')).toBe('json')
    for (const fallback of ['json', 'prometheus'] as const) {
      expect(metricsFormat(undefined, undefined, fallback)).toBe(fallback)
      expect(metricsFormat(undefined, '*/*', fallback)).toBe(fallback)
      expect(metricsFormat(undefined, 'image/png', fallback)).toBe(fallback)
      expect(metricsFormat(undefined, 'application/json;q=abc, text/plain;q=7', fallback)).toBe(fallback)
    }
  })

  it('when the Accept header is hostile (huge, thousands of ranges), then only its first ranges are weighed', () => {
    const flood = `${'x/y;q=1,'.repeat(100_000)}application/json`
    expect(metricsFormat(undefined, flood, 'prometheus')).toBe('prometheus')
    expect(metricsFormat(undefined, `application/json,${'x/y,'.repeat(100_000)}`, 'prometheus')).toBe('json')
  })
})

describe('chassis: health', () => {
  let chassis: ChassisApp
  let databaseUp = true

  beforeAll(async () => {
    chassis = await buildChassisApp()
    chassis.app.health.add('database', async () => {
      if (!databaseUp) throw new Error('connect ECONNREFUSED 127.0.0.1:5432')
    })
    chassis.app.health.add('redis', async () => {
      await chassis.redis.ping()
    })
  })
  afterAll(async () => {
    await chassis.app.close()
  })

  it('when every dependency is reachable, then /health, /health/ready and /healthz answer 200 with per-dependency checks', async () => {
    databaseUp = true
    const health = await chassis.app.inject({ method: 'GET', url: '/health' })
    expect(health.statusCode).toBe(200)
    expect(health.json()).toMatchObject({
      status: 'ok',
      uptime: expect.any(Number),
      memory: { rss: expect.any(Number), heapUsed: expect.any(Number) },
      checks: { database: 'ok', redis: 'ok' },
    })
    expect((await chassis.app.inject({ method: 'GET', url: '/health/ready' })).json()).toMatchObject({
      status: 'ready',
    })
    expect((await chassis.app.inject({ method: 'GET', url: '/healthz' })).json()).toMatchObject({
      status: 'healthy',
    })
  })

  it('when a dependency is unreachable, then /health and /health/ready answer 503 naming it unavailable (its problem, an address, only in the log), while liveness stays 200', async () => {
    databaseUp = false
    const health = await chassis.app.inject({
      method: 'GET',
      url: '/health',
      headers: { 'x-request-id': 'health-probe-1' },
    })
    expect(health.statusCode).toBe(503)
    expect(health.json()).toMatchObject({
      status: 'degraded',
      checks: { database: 'unavailable', redis: 'ok' },
    })
    expect(health.body).not.toContain('127.0.0.1')
    expect(chassis.logs).toContainEqual(
      expect.objectContaining({
        msg: 'health check failing',
        check: 'database',
        problem: 'connect ECONNREFUSED 127.0.0.1:5432',
        requestId: 'health-probe-1',
      }),
    )
    const ready = await chassis.app.inject({ method: 'GET', url: '/health/ready' })
    expect(ready.statusCode).toBe(503)
    expect(ready.json()).toMatchObject({ status: 'not_ready' })
    expect((await chassis.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(503)
    const live = await chassis.app.inject({ method: 'GET', url: '/health/live' })
    expect(live.statusCode).toBe(200)
    expect(live.json()).toMatchObject({ status: 'alive' })
    databaseUp = true
  })

  it('when the instance is draining for shutdown, then readiness reports not_ready', async () => {
    chassis.app.health.draining = true
    try {
      const ready = await chassis.app.inject({ method: 'GET', url: '/health/ready' })
      expect(ready.statusCode).toBe(503)
      expect(ready.json()).toMatchObject({ status: 'not_ready', checks: { shutdown: 'draining' } })
    } finally {
      chassis.app.health.draining = false
    }
  })
})

describe('chassis: metrics and OpenAPI', () => {
  let chassis: ChassisApp

  beforeAll(async () => {
    chassis = await buildChassisApp()
  })
  afterAll(async () => {
    await chassis.app.close()
  })

  it('when requests were served, then /metrics counts them as Prometheus text by default and as JSON for who asks for it', async () => {
    await chassis.app.inject({ method: 'GET', url: '/api/v1/widgets/1' })
    await chassis.app.inject({ method: 'GET', url: '/api/v1/widgets/2' })
    const json = await chassis.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { accept: 'application/json' },
    })
    expect(json.json()).toMatchObject({
      totalConnections: expect.any(Number),
      activeConnections: expect.any(Number),
      messagesReceived: expect.any(Number),
      messagesSent: expect.any(Number),
    })
    expect(json.json().messagesReceived).toBeGreaterThanOrEqual(3)
    expect(json.json().messagesSent).toBeGreaterThanOrEqual(2)
    const text = await chassis.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { accept: 'text/plain' },
    })
    expect(text.headers['content-type']).toContain('text/plain')
    expect(text.body).toContain('http_request_duration_seconds_bucket')
    expect(text.body).toMatch(/http_requests_received_total\{service="[^"]+"\} \d+/)
  })

  it('when /metrics is asked without a preference (a bare curl, */*), by Prometheus, or for JSON, then each gets its format, and the answer varies by Accept', async () => {
    const answer = async (headers: Record<string, string>, query = '') => {
      const response = await chassis.app.inject({ method: 'GET', url: `/metrics${query}`, headers })
      expect(response.statusCode).toBe(200)
      expect(response.headers.vary).toContain('Accept')
      return String(response.headers['content-type']).split(';')[0]
    }
    expect(await answer({})).toBe('text/plain')
    expect(await answer({ accept: '*/*' })).toBe('text/plain')
    expect(await answer({ accept: prometheusAccept })).toBe('text/plain')
    expect(await answer({ accept: 'application/json' })).toBe('application/json')
    expect(await answer({ accept: 'text/plain;q=0.2, application/json;q=0.9' })).toBe('application/json')
    expect(await answer({ accept: 'application/json' }, '?format=prometheus')).toBe('text/plain')
    expect(await answer({ accept: 'text/plain' }, '?format=json')).toBe('application/json')
  })

  it('when the service makes the JSON counters its default (the gateway, the realtime channel), then a request without a preference gets them, and Prometheus still gets text', async () => {
    chassis.app.metrics.defaultFormat = 'json'
    try {
      const bare = await chassis.app.inject({ method: 'GET', url: '/metrics' })
      expect(bare.json()).toMatchObject({ totalConnections: expect.any(Number) })
      const scraped = await chassis.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { accept: prometheusAccept },
      })
      expect(scraped.headers['content-type']).toContain('text/plain')
    } finally {
      chassis.app.metrics.defaultFormat = 'prometheus'
    }
  })

  it('when /docs/json is read, then it is an OpenAPI 3.1 document of the v1 routes without the /api alias', async () => {
    const response = await chassis.app.inject({ method: 'GET', url: '/docs/json' })
    expect(response.statusCode).toBe(200)
    const document = response.json() as {
      openapi: string
      info: { version: string }
      paths: Record<string, unknown>
    }
    expect(document.openapi).toBe('3.1.0')
    expect(document.info.version).toBe('1.2.3')
    expect(Object.keys(document.paths)).toContain('/api/v1/widgets')
    expect(Object.keys(document.paths).some((path) => path.startsWith('/api/widgets'))).toBe(false)
    const ui = await chassis.app.inject({ method: 'GET', url: '/docs/' })
    expect(ui.statusCode).toBe(200)
    expect(ui.headers['content-type']).toContain('text/html')
  })
})

describe('chassis: rate limits in Redis', () => {
  it('when a client exceeds the limit with exact counting (sync 0), then it gets 429 RATE_LIMITED with Retry-After and retryAfter, counted across two instances sharing Redis', async () => {
    const name = `rl-${Date.now()}`
    const one = await buildChassisApp({ rateLimitMax: 3, name, rateLimitSyncMs: 0 })
    const two = await buildChassisApp({ rateLimitMax: 3, name, rateLimitSyncMs: 0 })
    try {
      const first = await one.app.inject({ method: 'GET', url: '/api/v1/widgets/1' })
      expect(first.headers['x-ratelimit-limit']).toBe('3')
      expect(first.headers['x-ratelimit-remaining']).toBe('2')
      await two.app.inject({ method: 'GET', url: '/api/v1/widgets/1' })
      const third = await one.app.inject({ method: 'GET', url: '/api/v1/widgets/1' })
      expect(third.statusCode).toBe(200)
      expect(third.headers['x-ratelimit-remaining']).toBe('0')

      const limited = await two.app.inject({ method: 'GET', url: '/api/v1/widgets/1' })
      const error = expectErrorEnvelope(limited, 429, 'RATE_LIMITED')
      const retryAfter = Number(limited.headers['retry-after'])
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(error).toMatchObject({ message: 'Rate limit exceeded', retryAfter })
      // health stays reachable for probes while the client is limited
      expect((await two.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)
    } finally {
      await Promise.all([one.app.close(), two.app.close()])
    }
  })

  it('when counts are settled with Redis in batches (the default), then one instance counts exactly, and a second instance sees the requests of the first after one sync interval', async () => {
    const name = uniqueName('rl-synced')
    const one = await buildChassisApp({ rateLimitMax: 5, name, rateLimitSyncMs: 50 })
    const two = await buildChassisApp({ rateLimitMax: 5, name, rateLimitSyncMs: 50 })
    const get = (chassis: ChassisApp) => chassis.app.inject({ method: 'GET', url: '/api/v1/widgets/1' })
    try {
      const remaining = []
      for (let i = 0; i < 3; i++) remaining.push((await get(one)).headers['x-ratelimit-remaining'])
      expect(remaining).toEqual(['4', '3', '2'])

      // what Redis holds: the total both instances settled
      const stored = async () => {
        const keys = await one.redis.keys(`${name}:rate-limit:*`)
        expect(keys.length).toBeLessThanOrEqual(1)
        return keys[0] === undefined ? 0 : Number(await one.redis.get(keys[0]))
      }
      // once the first instance has settled, the second instance's first request of the window reads the shared
      // count: it is the fourth
      await eventually('the first instance settles its 3', async () => (await stored()) === 3, undefined, 20)
      expect((await get(two)).headers['x-ratelimit-remaining']).toBe('1')

      // Alternating between the instances: each answers from its own view, which may lack the other's requests of
      // the last interval, so at most one request per instance gets past the limit; then both refuse. (The bounds
      // hold however many syncs fall between the rounds, none included: the pauses only let some happen.)
      const statuses: number[] = []
      for (let round = 0; round < 4; round++) {
        await new Promise((resolve) => setTimeout(resolve, 120))
        statuses.push((await get(one)).statusCode, (await get(two)).statusCode)
      }
      const admitted = 4 + statuses.filter((status) => status === 200).length
      expect(admitted).toBeGreaterThanOrEqual(5)
      expect(admitted).toBeLessThanOrEqual(5 + 2)
      expect(statuses.slice(-2)).toEqual([429, 429])
      // once both have settled, what Redis holds is the total of both instances
      await eventually(
        'both instances settle every request',
        async () => (await stored()) === 4 + statuses.length,
      )
      expect(await stored()).toBe(4 + statuses.length)
    } finally {
      await Promise.all([one.app.close(), two.app.close()])
    }
  })

  it('when requests come through a trusted proxy, then each client behind it is counted on its own; from an untrusted peer X-Forwarded-For is ignored', async () => {
    const behindGateway = await buildChassisApp({
      rateLimitMax: 2,
      name: uniqueName('rl-proxy'),
      rateLimitSyncMs: 0,
      trustedProxies: 'loopback',
    })
    const trustingNobody = await buildChassisApp({
      rateLimitMax: 2,
      name: uniqueName('rl-direct'),
      rateLimitSyncMs: 0,
      trustedProxies: '',
    })
    const get = (chassis: ChassisApp, peer: string, client: string) =>
      chassis.app.inject({
        method: 'GET',
        url: '/api/v1/widgets/1',
        remoteAddress: peer,
        headers: { 'x-forwarded-for': client },
      })
    try {
      // through the gateway on loopback: two clients, two budgets
      for (const client of ['203.0.113.7', '198.51.100.9']) {
        expect((await get(behindGateway, '127.0.0.1', client)).headers['x-ratelimit-remaining']).toBe('1')
      }
      // a peer that is not trusted cannot pick its identity: every claimed client is the same peer
      const remaining = []
      for (const client of ['203.0.113.7', '198.51.100.9', '192.0.2.1']) {
        remaining.push((await get(behindGateway, '10.9.8.7', client)).statusCode)
      }
      expect(remaining).toEqual([200, 200, 429])
      // with nobody trusted, even loopback's X-Forwarded-For is ignored
      const direct = []
      for (const client of ['203.0.113.7', '198.51.100.9', '192.0.2.1']) {
        direct.push((await get(trustingNobody, '127.0.0.1', client)).statusCode)
      }
      expect(direct).toEqual([200, 200, 429])
    } finally {
      await Promise.all([behindGateway.app.close(), trustingNobody.app.close()])
    }
  })
})
