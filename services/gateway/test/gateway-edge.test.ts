// The edge: CORS from an allow-list, rate limits shared by gateway instances through Redis, keyed by address,
// user or API key; configurations that must not start.
import { createHmac } from 'node:crypto'
import { expectErrorEnvelope, fetchedAnswer, freshRedis, type TestRedis, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadGatewayConfig } from '../src/config.ts'
import { startGateway, type TestGateway } from './support/gateway.ts'

// a service with no instance: its routes answer 503, which is enough to count requests at the edge
const routes = [{ prefix: '/api/v1/nothing', service: uniqueName('gw-absent') }]
const allowedOrigin = 'https://shop.example.com'
const jwtSecret = 'edge-test-secret-that-is-long-enough-123'
const jwtIssuer = 'http://127.0.0.1:8080'

let shared: TestRedis
let first: TestGateway
let second: TestGateway

beforeAll(async () => {
  shared = freshRedis('gateway-edge')
  const env = {
    CORS_ORIGINS: `${allowedOrigin}, http://localhost:5173`,
    RATE_LIMIT_MAX: '3',
    RATE_LIMIT_SYNC_MS: '0',
    JWT_ALGORITHM: 'HS256',
    JWT_SECRET: jwtSecret,
    JWT_ISSUER: jwtIssuer,
  }
  first = await startGateway({ routes, env, redis: shared.redis })
  second = await startGateway({ routes, env, redis: shared.redis })
})

afterAll(async () => {
  await first?.close()
  await second?.close()
  await shared?.cleanup()
})

function hs256(claims: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`
  return `${unsigned}.${createHmac('sha256', jwtSecret).update(unsigned).digest('base64url')}`
}

const tokenFor = (sub: string) =>
  hs256({
    sub,
    role: 'user',
    iss: jwtIssuer,
    aud: 'meridian',
    exp: Math.floor(Date.now() / 1000) + 600,
  })

describe('CORS', () => {
  it('when an allowed origin sends a preflight, then the gateway answers it with the allow headers', async () => {
    const response = await fetch(`${first.url}/api/v1/nothing/orders`, {
      method: 'OPTIONS',
      headers: {
        origin: allowedOrigin,
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'content-type, authorization',
      },
    })
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe(allowedOrigin)
    expect(response.headers.get('access-control-allow-credentials')).toBe('true')
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, PATCH, DELETE')
    expect(response.headers.get('access-control-allow-headers')).toBe('content-type, authorization')
    expect(response.headers.get('vary')).toContain('Origin')
  })

  it('when a refused origin sends a preflight, then the answer carries no allow headers', async () => {
    const response = await fetch(`${first.url}/api/v1/nothing/orders`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    })
    expect(response.status).toBe(204)
    for (const name of [
      'access-control-allow-origin',
      'access-control-allow-credentials',
      'access-control-allow-methods',
      'access-control-allow-headers',
    ]) {
      expect(response.headers.get(name)).toBeNull()
    }
  })

  it('when an allowed origin makes a request, then its answer (even an error) can be read by the page', async () => {
    const response = await fetch(`${first.url}/nowhere`, { headers: { origin: allowedOrigin } })
    expect(response.status).toBe(404)
    expect(response.headers.get('access-control-allow-origin')).toBe(allowedOrigin)
    expect(response.headers.get('access-control-expose-headers')).toContain('x-request-id')
  })

  it('when a refused origin makes a request, then it gets no CORS headers', async () => {
    const response = await fetch(`${first.url}/health`, { headers: { origin: 'https://evil.example' } })
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
    expect(response.headers.get('access-control-allow-credentials')).toBeNull()
  })
})

describe('rate limits', () => {
  it('when one address exceeds the limit across two gateways, then the next request gets 429 with retry hints', async () => {
    const statuses: number[] = []
    const remaining: (string | null)[] = []
    for (const gateway of [first, second, first]) {
      const response = await fetch(`${gateway.url}/api/v1/nothing/x`)
      statuses.push(response.status)
      remaining.push(response.headers.get('x-ratelimit-remaining'))
      expect(response.headers.get('x-ratelimit-limit')).toBe('3')
    }
    expect(statuses).toEqual([503, 503, 503])
    expect(remaining).toEqual(['2', '1', '0'])
    const limited = await fetch(`${second.url}/api/v1/nothing/x`)
    const error = expectErrorEnvelope(await fetchedAnswer(limited), 429, 'RATE_LIMITED')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(error.retryAfter).toBe(Number(limited.headers.get('retry-after')))
  })

  it('when requests carry an API key, then they are counted against the key, not the address', async () => {
    const apiKey = `mk_${uniqueName('key')}`
    const remaining: (string | null)[] = []
    for (const gateway of [first, second]) {
      const response = await fetch(`${gateway.url}/api/v1/nothing/x`, { headers: { 'x-api-key': apiKey } })
      expect(response.status).toBe(503)
      remaining.push(response.headers.get('x-ratelimit-remaining'))
    }
    expect(remaining).toEqual(['2', '1'])
  })

  it('when requests carry valid bearer tokens, then each user has a budget of their own', async () => {
    for (const user of [uniqueName('user'), uniqueName('user')]) {
      const response = await fetch(`${first.url}/api/v1/nothing/x`, {
        headers: { authorization: `Bearer ${tokenFor(user)}` },
      })
      expect(response.status).toBe(503)
      expect(response.headers.get('x-ratelimit-remaining')).toBe('2')
    }
  })

  it('when a bearer token is invalid, then the request is counted by address (the service refuses it)', async () => {
    const response = await fetch(`${second.url}/api/v1/nothing/x`, {
      headers: { authorization: 'Bearer not-a-token' },
    })
    // this address used its budget in the first test
    expect(response.status).toBe(429)
  })
})

describe('configuration', () => {
  it('when CORS_ORIGINS holds a wildcard, then the gateway refuses to start', () => {
    expect(() => loadGatewayConfig({ NODE_ENV: 'test', CORS_ORIGINS: '*' })).toThrow(/wildcards are refused/)
    expect(() => loadGatewayConfig({ NODE_ENV: 'test', CORS_ORIGINS: 'https://*.example.com' })).toThrow(
      /CORS_ORIGINS/,
    )
  })

  it('when GATEWAY_SERVICE_NAMES is malformed, then the gateway refuses to start', () => {
    expect(() => loadGatewayConfig({ NODE_ENV: 'test', GATEWAY_SERVICE_NAMES: 'auth' })).toThrow(
      /GATEWAY_SERVICE_NAMES/,
    )
  })

  it('when nothing is set, then it is production and refuses the development service credential', () => {
    expect(() => loadGatewayConfig({})).toThrow(/SERVICE_CREDENTIAL: must be set in production/)
  })

  it('when nothing else is set, then the gateway listens on 8080 with the spec upstream timeout', () => {
    const config = loadGatewayConfig({ NODE_ENV: 'test' })
    expect(config.PORT).toBe(8080)
    expect(config.UPSTREAM_TIMEOUT_MS).toBe(5000)
  })
})
