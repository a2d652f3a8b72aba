// The gateway in front of real service processes found in the real Consul: balancing, failover, retries, timeouts,
// request ids, forwarded headers, the route table, WebSocket pass-through, /health and /docs.
import { request as httpRequest } from 'node:http'
import {
  consulApi,
  expectErrorEnvelope,
  httpAnswer,
  rawExchange,
  rawJsonPost,
  scaledMs,
  uniqueName,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { eventually, startGateway, type TestGateway } from './support/gateway.ts'
import { startUpstream, type UpstreamProcess } from './support/upstream-process.ts'

const balanced = uniqueName('gw-balanced')
const stable = uniqueName('gw-stable')
const slow = uniqueName('gw-slow')
const routes = [
  { prefix: '/api/v1/test', service: balanced },
  { prefix: '/api/v1/other', service: stable },
  { prefix: '/api/v1/slow', service: slow },
  { prefix: '/ws', service: stable, websocket: true as const },
]

const started: UpstreamProcess[] = []
const gateways: TestGateway[] = []
let gateway: TestGateway
let a: UpstreamProcess
let b: UpstreamProcess
let c: UpstreamProcess
let h: UpstreamProcess

async function upstream(options: Parameters<typeof startUpstream>[0]): Promise<UpstreamProcess> {
  const process = await startUpstream(options)
  started.push(process)
  return process
}

async function gatewayWith(env: Record<string, string> = {}): Promise<TestGateway> {
  const instance = await startGateway({ routes, env })
  gateways.push(instance)
  return instance
}

const instancesOf = (target: TestGateway, service: string) => target.app.upstreams.get(service)?.status()

async function getJson(url: string, init?: RequestInit) {
  const response = await fetch(url, init)
  const text = await response.text()
  return {
    response,
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  }
}

/** A request with node:http (fetch would normalise dot segments and cannot send Expect), read whole. */
function rawRequest(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; readAfterMs?: number } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer; continued: boolean }> {
  return new Promise((resolve, reject) => {
    let continued = false
    // (host, port and path apart: a URL string would be normalised too)
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port: gateway.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
      },
      (incoming) => {
        const chunks: Buffer[] = []
        // a client that reads late: the gateway must hold the upstream back rather than buffer everything
        if (options.readAfterMs) {
          incoming.pause()
          setTimeout(() => incoming.resume(), options.readAfterMs)
        }
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
        incoming.on('error', reject)
        incoming.on('aborted', () => reject(new Error('response aborted')))
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: Buffer.concat(chunks),
            continued,
          }),
        )
      },
    )
    outgoing.on('error', reject)
    if (options.headers?.expect) {
      outgoing.on('continue', () => {
        continued = true
        outgoing.end(options.body)
      })
      outgoing.flushHeaders()
    } else {
      outgoing.end(options.body)
    }
  })
}

beforeAll(async () => {
  ;[a, b, c, h] = await Promise.all([
    upstream({ name: balanced, label: 'a', weight: 1 }),
    upstream({ name: balanced, label: 'b', weight: 3 }),
    upstream({ name: stable, label: 'c', segment: 'other' }),
    upstream({ name: slow, label: 'h', segment: 'slow' }),
  ])
  gateway = await gatewayWith()
  await eventually(
    () =>
      instancesOf(gateway, balanced)?.instances === 2 &&
      instancesOf(gateway, stable)?.instances === 1 &&
      instancesOf(gateway, slow)?.instances === 1,
  )
}, scaledMs(60_000))

afterAll(async () => {
  await Promise.all(gateways.map((instance) => instance.close()))
  await Promise.all(started.map((process) => process.stop()))
  await Promise.all(started.map((process) => process.deregister()))
})

describe('request ids and headers', () => {
  it('when a request carries an X-Request-Id, then the gateway, the service and both responses use it', async () => {
    const { response, body } = await getJson(`${gateway.url}/api/v1/other/whoami`, {
      headers: { 'x-request-id': 'edge-id-123' },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toBe('edge-id-123')
    // the upstream's own id, in its response body, is the same
    expect(body.requestId).toBe('edge-id-123')
    expect(gateway.logs.some((line) => line.requestId === 'edge-id-123')).toBe(true)
    await eventually(() => c.logs.some((line) => line.requestId === 'edge-id-123'))
  })

  it('when a request has no id, then the one the gateway makes is the one the service uses', async () => {
    const { response, body } = await getJson(`${gateway.url}/api/v1/other/whoami`)
    const id = response.headers.get('x-request-id')
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(body.requestId).toBe(id)
    expect(gateway.logs.some((line) => line.requestId === id)).toBe(true)
    await eventually(() => c.logs.some((line) => line.requestId === id))
  })

  it('when a request carries hop-by-hop headers, then the upstream receives none of them', async () => {
    const received = await new Promise<Record<string, string>>((resolve, reject) => {
      const outgoing = httpRequest(
        `${gateway.url}/api/v1/other/whoami`,
        {
          headers: {
            connection: 'keep-alive, x-hop-secret',
            'x-hop-secret': 'must-not-pass',
            'keep-alive': 'timeout=5',
            te: 'trailers',
            'proxy-authorization': 'Basic eDp5',
            'x-kept': 'yes',
          },
        },
        (incoming) => {
          let text = ''
          incoming.on('data', (chunk) => {
            text += chunk
          })
          incoming.on('end', () => resolve(JSON.parse(text).headers))
        },
      )
      outgoing.on('error', reject)
      outgoing.end()
    })
    expect(received['x-kept']).toBe('yes')
    for (const name of ['x-hop-secret', 'keep-alive', 'te', 'proxy-authorization']) {
      expect(received).not.toHaveProperty(name)
    }
    expect(received.connection ?? '').not.toContain('x-hop-secret')
    expect(received.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    expect(received['x-forwarded-proto']).toBe('http')
    expect(received['x-forwarded-host']).toBe(`127.0.0.1:${gateway.port}`)
  })

  it('when a client sends X-Service-Credential, then the service behind never receives it, whatever its form', async () => {
    const credential = 'a-credential-guessed-or-stolen-0123456789'
    for (const headers of [
      { 'x-service-credential': credential },
      { 'X-Service-Credential': credential, connection: 'keep-alive' },
    ]) {
      const { status, body } = await getJson(`${gateway.url}/api/v1/other/whoami`, { headers })
      expect(status).toBe(200)
      expect(body.headers).not.toHaveProperty('x-service-credential')
      expect(JSON.stringify(body)).not.toContain(credential)
    }
    // twice on one request, written byte by byte: neither value passes
    const twice = await rawExchange(
      gateway.port,
      `GET /api/v1/other/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Service-Credential: ${credential}\r\nx-service-credential: ${credential}-2\r\nConnection: close\r\n\r\n`,
    )
    expect(twice).toMatch(/^HTTP\/1\.1 200 /)
    expect(twice).toContain('"x-request-id"')
    expect(twice).not.toContain(credential)
  })

  it('when a traceparent arrives, then the upstream gets the same one', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    const { body } = await getJson(`${gateway.url}/api/v1/other/whoami`, { headers: { traceparent } })
    expect(body.headers.traceparent).toBe(traceparent)
  })

  it('when an untrusted peer sends X-Forwarded-For, then it is ignored', async () => {
    const { body } = await getJson(`${gateway.url}/api/v1/other/whoami`, {
      headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-host': 'evil.example' },
    })
    expect(body.headers['x-forwarded-for']).toBe('127.0.0.1')
    expect(body.headers['x-real-ip']).toBe('127.0.0.1')
    expect(body.headers['x-forwarded-host']).toBe(`127.0.0.1:${gateway.port}`)
  })

  it('when the peer is a trusted proxy, then its X-Forwarded-For names the client', async () => {
    const trusting = await gatewayWith({ TRUSTED_PROXIES: '127.0.0.1,::1' })
    await eventually(() => instancesOf(trusting, stable)?.instances === 1)
    const { body } = await getJson(`${trusting.url}/api/v1/other/whoami`, {
      headers: { 'x-forwarded-for': '203.0.113.9' },
    })
    expect(body.headers['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.1')
    expect(body.headers['x-real-ip']).toBe('203.0.113.9')
  })
})

describe('route table', () => {
  it('when a path is under /api, then the service receives it as /api/v1 with its query', async () => {
    const { status, body } = await getJson(`${gateway.url}/api/other/items/42?view=full`)
    expect(status).toBe(200)
    expect(body).toEqual({ id: '42', url: '/api/v1/other/items/42?view=full' })
  })

  it('when a path is unknown, then the gateway itself answers 404 with the error envelope', async () => {
    const answer = httpAnswer(await getJson(`${gateway.url}/nowhere/at/all`))
    expect(expectErrorEnvelope(answer, 404, 'NOT_FOUND').message).toBe('Route GET /nowhere/at/all not found')
  })

  it('when a path only shares characters with a prefix, then it does not match it', async () => {
    expectErrorEnvelope(httpAnswer(await getJson(`${gateway.url}/api/v1/otherx/whoami`)), 404, 'NOT_FOUND')
  })

  it('when a body is posted, then it reaches the service as it was sent', async () => {
    const { status, body } = await getJson(`${gateway.url}/api/v1/other/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'widget', tags: ['a', 'b'] }),
    })
    expect(status).toBe(200)
    expect(body.body).toEqual({ name: 'widget', tags: ['a', 'b'] })
  })

  it('when a declared body is larger than 1 MB, then the gateway answers 413 without calling the service', async () => {
    const answer = await getJson(`${gateway.url}/api/v1/other/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ blob: 'x'.repeat(1024 * 1024) }),
    })
    expectErrorEnvelope(httpAnswer(answer), 413, 'PAYLOAD_TOO_LARGE')
  })
})

describe('relaying answers', () => {
  it('when an answer is larger than the sockets hold and the client reads late, then it arrives whole', async () => {
    const size = 8 * 1024 * 1024
    const { status, headers, body } = await rawRequest(`/api/v1/other/bytes/${size}`, { readAfterMs: 300 })
    expect(status).toBe(200)
    expect(headers['content-length']).toBe(String(size))
    expect(body.length).toBe(size)
    // the upstream sends the 9-byte pattern again in every 64 KiB chunk
    const chunk = Buffer.alloc(64 * 1024, 'meridian/')
    for (let offset = 0; offset < size; offset += chunk.length) {
      expect(body.subarray(offset, offset + chunk.length).equals(chunk)).toBe(true)
    }
  })

  it('when the service streams an answer of unknown length, then the client gets every piece, chunked', async () => {
    const { status, headers, body } = await rawRequest('/api/v1/other/chunked')
    expect(status).toBe(200)
    expect(headers['transfer-encoding']).toBe('chunked')
    expect(headers).not.toHaveProperty('content-length')
    expect(body.toString()).toBe('one two three')
  })

  it('when a HEAD request is proxied, then the client gets the headers and no body', async () => {
    const { status, headers, body } = await rawRequest('/api/v1/other/whoami', { method: 'HEAD' })
    expect(status).toBe(200)
    expect(headers['content-type']).toMatch(/^application\/json/)
    expect(headers['x-request-id']).toBeTruthy()
    expect(body.length).toBe(0)
  })

  it('when the service breaks off in the middle of an answer, then the client sees it broken, not short', async () => {
    await expect(rawRequest('/api/v1/other/broken')).rejects.toThrow()
    await eventually(() =>
      gateway.logs.some((line) => line.msg === 'upstream answer broke off; the client response is cut short'),
    )
  })

  it('when a client sends Expect: 100-continue, then the gateway lets the body come and the service gets it', async () => {
    const { status, body, continued } = await rawRequest('/api/v1/other/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/json', expect: '100-continue' },
      body: JSON.stringify({ name: 'large', size: 2048 }),
    })
    expect(continued).toBe(true)
    expect(status).toBe(200)
    expect(JSON.parse(body.toString()).body).toEqual({ name: 'large', size: 2048 })
  })

  it('when a request carries Idempotency-Key on two lines, then the gateway refuses it with 400 before a service sees their join', async () => {
    // forwarded, Node's joined "first, second" would reach the service as one well-formed key
    const answer = await rawJsonPost(gateway.port, '/api/v1/other/echo', { name: 'twice' }, [
      ['Idempotency-Key', 'first'],
      ['Idempotency-Key', 'second'],
    ])
    const error = expectErrorEnvelope(answer, 400, 'VALIDATION_ERROR')
    expect(error.details).toEqual([{ field: 'Idempotency-Key', message: 'must be sent once' }])
    // once is forwarded
    const once = await rawJsonPost(gateway.port, '/api/v1/other/echo', { name: 'once' }, [
      ['Idempotency-Key', 'first'],
    ])
    expect(once.statusCode).toBe(200)
  })

  it('when a path has dot segments, plain or percent-encoded, then the gateway refuses it with 400', async () => {
    for (const path of [
      '/api/v1/other/../../hits',
      '/api/v1/other/%2e%2e/%2E%2E/hits',
      '/api/v1/other/..%2F..%2Fhits',
      '/api/v1/other/.%2fwhoami',
      '/api/v1/other/..\\hits',
    ]) {
      const error = expectErrorEnvelope(httpAnswer(await rawRequest(path)), 400, 'BAD_REQUEST', {
        context: path,
      })
      expect(error.message, path).toBe('Malformed request path')
    }
    // names that merely contain dots are paths like any other
    expect((await rawRequest('/api/v1/other/items/v1..2')).status).toBe(200)
  })

  it('when a path segment is longer than the routers take, then the gateway answers 414 itself instead of a shorter prefix (another service) answering 404', async () => {
    for (const path of [
      `/api/v1/other/${'a'.repeat(101)}`,
      `/api/v1/other/${'%F1%95%96%99'.repeat(30)}/orders`,
      `/api/v1/other/items/${'b'.repeat(500)}?q=1`,
    ]) {
      expectErrorEnvelope(httpAnswer(await rawRequest(path)), 414, 'URI_TOO_LONG', { context: path })
    }
    // up to the limit, a segment is a path like any other; a long query is not a segment
    expect((await rawRequest(`/api/v1/other/items/${'c'.repeat(100)}`)).status).toBe(200)
    expect((await rawRequest(`/api/v1/other/items/x?q=${'d'.repeat(500)}`)).status).toBe(200)
  })

  it('when the client goes away in the middle of a long answer, then the gateway lets go of it, no verdict', async () => {
    const id = 'gone-client-2'
    await new Promise<void>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: '127.0.0.1',
          port: gateway.port,
          path: `/api/v1/other/bytes/${256 * 1024 * 1024}`,
          headers: { 'x-request-id': id },
        },
        (incoming) => {
          // read the first chunk, then leave
          incoming.once('data', () => {
            outgoing.destroy()
            resolve()
          })
        },
      )
      outgoing.on('error', () => {})
      outgoing.on('close', () => resolve())
      outgoing.on('timeout', () => reject(new Error('no answer')))
      outgoing.end()
    })
    await eventually(() =>
      gateway.logs.some((line) => line.requestId === id && line.msg === 'client went away during the answer'),
    )
    expect(instancesOf(gateway, stable)?.ejected).toEqual([])
  })

  it('when the client goes away while the service is still answering, then the gateway lets go of the call', async () => {
    const id = 'gone-client-1'
    const hangs = async () => (await h.hits())['GET /api/v1/slow/hang'] ?? 0
    const hangsBefore = await hangs()
    const outgoing = httpRequest(`${gateway.url}/api/v1/slow/hang`, { headers: { 'x-request-id': id } })
    outgoing.on('error', () => {})
    outgoing.end()
    // the call has reached the service, which holds it: the client leaves during the upstream call
    await eventually(async () => (await hangs()) > hangsBefore)
    outgoing.destroy()
    await eventually(() =>
      gateway.logs.some(
        (line) => line.requestId === id && line.msg === 'client went away during the upstream call',
      ),
    )
    // no verdict on the instance: it was the client that left
    expect(instancesOf(gateway, slow)?.ejected).toEqual([])
  })
})

describe('websocket pass-through', () => {
  it('when a client opens a WebSocket through the gateway, then it exchanges messages with the service', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/ws`, {
      headers: { 'x-request-id': 'ws-id-1' },
    })
    const messages: string[] = []
    const received = (count: number) => eventually(() => messages.length >= count)
    socket.on('message', (data) => messages.push(String(data)))
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    await received(1)
    expect(JSON.parse(messages[0]!)).toEqual({ instance: 'c', requestId: 'ws-id-1' })
    socket.send('hello')
    socket.send('again')
    await received(3)
    expect(messages.slice(1)).toEqual(['echo:hello', 'echo:again'])
    socket.close()
    await new Promise((resolve) => socket.once('close', resolve))
  })

  it('when a WebSocket path is not routed, then the upgrade gets the 404 envelope', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/nowhere`)
    const status = await new Promise<number>((resolve) => {
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0))
      socket.once('error', () => resolve(-1))
    })
    expect(status).toBe(404)
  })
})

describe('operations', () => {
  it('when /health is asked, then it reports each routed service as counts: no instance id, no Consul name (it is public)', async () => {
    const { status, body } = await getJson(`${gateway.url}/health`)
    expect(status).toBe(200)
    expect(body.checks).toEqual({ redis: 'ok', consul: 'ok' })
    expect(body.upstreams[balanced]).toEqual({ instances: 2, available: 2, ejected: 0, circuit: 'closed' })
    expect(body.upstreams[stable]).toEqual({ instances: 1, available: 1, ejected: 0, circuit: 'closed' })
  })

  it('when /docs/json is asked, then it merges the routed paths of the services with the gateway own', async () => {
    const { status, body } = await getJson(`${gateway.url}/docs/json`)
    expect(status).toBe(200)
    expect(Object.keys(body.paths)).toEqual(
      expect.arrayContaining([
        '/health',
        '/api/v1/test/whoami',
        '/api/v1/other/whoami',
        '/api/v1/other/items/{id}',
      ]),
    )
    // the services' own operational routes are not reachable through the gateway
    expect(body.paths).not.toHaveProperty('/hits')
  })
})

describe('timeouts and the circuit', () => {
  // Which timeout ended the call is read from the answer, which names the one in force; that it was waited for is a
  // lower bound, which a slow machine only makes easier to meet. No upper bound: a loaded machine answers late.
  it('when an upstream hangs, then the gateway answers 504 after the configured timeout', async () => {
    const startedAt = Date.now()
    const answer = await getJson(`${gateway.url}/api/v1/slow/hang`)
    const waited = Date.now() - startedAt
    const error = expectErrorEnvelope(httpAnswer(answer), 504, 'GATEWAY_TIMEOUT')
    expect(error.message).toBe('The upstream service did not answer within 1500 ms')
    expect(waited).toBeGreaterThanOrEqual(1400)
  })

  it('when the timeout is not configured, then it is the spec 5000 ms', async () => {
    const defaults = await gatewayWith({ UPSTREAM_TIMEOUT_MS: '' })
    await eventually(() => instancesOf(defaults, slow)?.instances === 1)
    const startedAt = Date.now()
    const answer = await getJson(`${defaults.url}/api/v1/slow/hang`)
    const waited = Date.now() - startedAt
    const error = expectErrorEnvelope(httpAnswer(answer), 504, 'GATEWAY_TIMEOUT')
    expect(error.message).toBe('The upstream service did not answer within 5000 ms')
    expect(waited).toBeGreaterThanOrEqual(4900)
  })

  it('when a service keeps failing, then its circuit opens and answers 503 at once with Retry-After', async () => {
    const breaking = await gatewayWith({
      UPSTREAM_TIMEOUT_MS: '300',
      BREAKER_FAILURE_THRESHOLD: '2',
      BREAKER_OPEN_MS: '30000',
      EJECT_AFTER_FAILURES: '100',
    })
    await eventually(() => instancesOf(breaking, slow)?.instances === 1)
    expect((await getJson(`${breaking.url}/api/v1/slow/hang`)).status).toBe(504)
    expect((await getJson(`${breaking.url}/api/v1/slow/hang`)).status).toBe(504)
    // "at once": the open circuit answers without calling the service, so there is nothing to wait for
    const hangs = async () => (await h.hits())['GET /api/v1/slow/hang'] ?? 0
    const hangsBefore = await hangs()
    const answer = await getJson(`${breaking.url}/api/v1/slow/hang`)
    expect(await hangs()).toBe(hangsBefore)
    expectErrorEnvelope(httpAnswer(answer), 503, 'SERVICE_UNAVAILABLE')
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(20)
    expect(instancesOf(breaking, slow)?.circuit).toBe('open')
  })
})

describe('retries', () => {
  const { baseUrl, headers } = consulApi()
  const deadId = uniqueName('dead-instance')

  it('when an instance refuses connections, then a POST is never retried and a GET is retried elsewhere', async () => {
    // an instance Consul calls passing whose port has no listener, weighted to be picked first
    await fetch(`${baseUrl}/v1/agent/service/register`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({
        ID: deadId,
        Name: stable,
        Address: '127.0.0.1',
        Port: 9,
        Meta: { weight: '100' },
        Check: { CheckID: `service:${deadId}`, TTL: '60s', DeregisterCriticalServiceAfter: '1m' },
      }),
    })
    await fetch(`${baseUrl}/v1/agent/check/pass/service:${deadId}`, { method: 'PUT', headers })
    try {
      await eventually(() => instancesOf(gateway, stable)?.instances === 2)
      const before = await c.hits()

      const post = await getJson(`${gateway.url}/api/v1/other/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ once: true }),
      })
      expectErrorEnvelope(httpAnswer(post), 503, 'SERVICE_UNAVAILABLE')
      expect(post.headers.get('retry-after')).toBeTruthy()

      const get = await getJson(`${gateway.url}/api/v1/other/whoami`)
      expect(get.status).toBe(200)
      expect(get.body.instance).toBe('c')

      const after = await c.hits()
      const key = (route: string) => route
      expect(after[key('POST /api/v1/other/echo')] ?? 0).toBe(before[key('POST /api/v1/other/echo')] ?? 0)
      expect(after[key('GET /api/v1/other/whoami')]).toBe((before[key('GET /api/v1/other/whoami')] ?? 0) + 1)
    } finally {
      await fetch(`${baseUrl}/v1/agent/service/deregister/${deadId}`, { method: 'PUT', headers })
    }
  })
})

describe('balancing and failover', () => {
  it('when two instances have weights 1 and 3, then requests are spread in that proportion', async () => {
    const counts: Record<string, number> = {}
    for (let i = 0; i < 40; i += 1) {
      const { status, body } = await getJson(`${gateway.url}/api/v1/test/whoami`)
      expect(status).toBe(200)
      counts[body.instance] = (counts[body.instance] ?? 0) + 1
    }
    expect(counts).toEqual({ a: 10, b: 30 })
  })

  it('when one instance is killed, then no request fails more than once and traffic moves to the survivor', async () => {
    await a.kill()
    const failedAttempts = () =>
      gateway.logs.filter((line) => line.msg === 'upstream attempt failed' && line.upstream === balanced)
    const seen: string[] = []
    for (let i = 0; i < 20; i += 1) {
      const { status, body } = await getJson(`${gateway.url}/api/v1/test/whoami`)
      // a GET that met the dead instance was retried on the live one
      expect(status).toBe(200)
      seen.push(body.instance)
    }
    expect(new Set(seen)).toEqual(new Set(['b']))
    const failures = failedAttempts()
    expect(failures.length).toBeLessThanOrEqual(3)
    // each failed attempt belongs to a different request: none failed twice
    expect(new Set(failures.map((line) => line.requestId)).size).toBe(failures.length)
    // The dead instance left the rotation by passive ejection after the attempts that met it, or by leaving Consul's
    // passing list when its 1 s check saw it first (with no attempt failing, or before enough failed to eject it).
    if (failures.length > 0) {
      const ejected = gateway.logs.some((line) => line.msg === 'upstream instance ejected')
      const leftConsul = gateway.logs.some(
        (line) =>
          line.msg === 'healthy instances changed' &&
          line.discoveredService === balanced &&
          line.instances === 1,
      )
      expect(ejected || leftConsul).toBe(true)
    }
  })

  it('when every instance is down, then the gateway answers 503 with Retry-After', async () => {
    await b.kill()
    for (let i = 0; i < 4; i += 1) {
      const answer = await getJson(`${gateway.url}/api/v1/test/whoami`)
      expectErrorEnvelope(httpAnswer(answer), 503, 'SERVICE_UNAVAILABLE', { context: `attempt ${i}` })
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    }
  })

  it('when an instance comes back, then traffic returns to it', async () => {
    await upstream({ name: balanced, label: 'a2' })
    await eventually(async () => (await getJson(`${gateway.url}/api/v1/test/whoami`)).body?.instance === 'a2')
    for (let i = 0; i < 5; i += 1) {
      const { status, body } = await getJson(`${gateway.url}/api/v1/test/whoami`)
      expect(status).toBe(200)
      expect(body.instance).toBe('a2')
    }
  })
})
