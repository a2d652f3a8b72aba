// The upstream client against real local HTTP servers: answers, forwarded request ids, and each failure mapping.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AppError, ErrorCode } from '@meridian/contracts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createUpstreamClient,
  type UpstreamClient,
  upstreamDefaults,
} from '../src/upstream/upstream-client.ts'
import { UpstreamStatusError, UpstreamTimeoutError } from '../src/upstream/upstream-failure.ts'

interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

/** A stand-in for another Meridian service; /status/<code> answers that status with an error envelope. */
async function startUpstreamServer(label: string) {
  const received: ReceivedRequest[] = []
  let connections = 0
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const url = request.url ?? '/'
    received.push({
      method: request.method ?? '',
      url,
      headers: request.headers,
      body: Buffer.concat(chunks).toString(),
    })
    const status = /^\/status\/(\d{3})$/.exec(url)?.[1]
    if (url === '/never') return // headers never come
    if (url === '/stalled-body') {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"partial":') // and the rest never comes
      return
    }
    if (url === '/text') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('plain words')
      return
    }
    if (url === '/empty') {
      response.writeHead(204).end()
      return
    }
    if (url === '/broken-json') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"no":')
      return
    }
    if (status) {
      response.writeHead(Number(status), { 'content-type': 'application/json', 'retry-after': '5' })
      response.end(
        JSON.stringify({
          success: false,
          error: {
            code: `UPSTREAM_${status}`,
            message: `upstream says ${status}`,
            ...(status === '422' ? { details: [{ field: 'email', message: 'must be an email' }] } : {}),
            requestId: 'up-1',
          },
        }),
      )
      return
    }
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-served-by': label })
    response.end(JSON.stringify({ ok: true, servedBy: label, path: url }))
  })
  server.on('connection', () => {
    connections += 1
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    server,
    received,
    connections: () => connections,
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    stop: () => {
      server.closeAllConnections()
      server.close()
    },
  }
}

async function closedPort(): Promise<number> {
  const server: Server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return port
}

async function failureOf(call: Promise<unknown>): Promise<AppError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(AppError)
  return error as AppError
}

describe('createUpstreamClient', () => {
  let upstream: Awaited<ReturnType<typeof startUpstreamServer>>
  let payment: UpstreamClient
  const clients: UpstreamClient[] = []

  beforeAll(async () => {
    upstream = await startUpstreamServer('payment-1')
    payment = createUpstreamClient({ name: 'payment', baseUrl: upstream.baseUrl })
    clients.push(payment)
  })
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()))
    upstream.stop()
  })

  function client(options: Parameters<typeof createUpstreamClient>[0]): UpstreamClient {
    const created = createUpstreamClient(options)
    clients.push(created)
    return created
  }

  it('when created without timeout or error code, then they are the spec defaults: 5000 ms and PAYMENT_SERVICE_ERROR', () => {
    expect(payment.timeoutMs).toBe(5000)
    expect(payment.errorCode).toBe(ErrorCode.PAYMENT_SERVICE_ERROR)
    expect(upstreamDefaults).toEqual({ timeoutMs: 5000, errorCode: 'PAYMENT_SERVICE_ERROR' })
  })

  it('when the upstream answers 200 with JSON, then status, headers and the parsed body are returned', async () => {
    const response = await payment.request<{ ok: boolean; servedBy: string; path: string }>({
      method: 'GET',
      path: '/payments/42',
      query: { expand: 'refunds', limit: 2, skipped: undefined },
    })
    expect(response.status).toBe(200)
    expect(response.headers['x-served-by']).toBe('payment-1')
    expect(response.body).toEqual({
      ok: true,
      servedBy: 'payment-1',
      path: '/payments/42?expand=refunds&limit=2',
    })
  })

  it('when a request id, headers and a JSON body are given, then the upstream receives them with X-Request-Id', async () => {
    await payment.request({
      method: 'POST',
      path: '/payments',
      body: { orderId: 'o-1', amount: 1250 },
      headers: { 'idempotency-key': 'key-1' },
      requestId: 'req-abc-123',
    })
    const last = upstream.received.at(-1)
    expect(last).toMatchObject({ method: 'POST', url: '/payments', body: '{"orderId":"o-1","amount":1250}' })
    expect(last?.headers).toMatchObject({
      'x-request-id': 'req-abc-123',
      'idempotency-key': 'key-1',
      'content-type': 'application/json',
      accept: 'application/json',
    })
  })

  it('when no request id is given, then none is invented', async () => {
    await payment.request({ method: 'GET', path: '/payments' })
    expect(upstream.received.at(-1)?.headers['x-request-id']).toBeUndefined()
  })

  it('when the upstream answers text or nothing, then the body is the text or undefined', async () => {
    expect((await payment.request<string>({ method: 'GET', path: '/text' })).body).toBe('plain words')
    expect(await payment.request({ method: 'DELETE', path: '/empty' })).toMatchObject({
      status: 204,
      body: undefined,
    })
  })

  it('when ten calls follow one another, then they reuse keep-alive connections instead of opening one each', async () => {
    const own = await startUpstreamServer('keep-alive')
    const keepAlive = client({ name: 'inventory', baseUrl: own.baseUrl })
    try {
      for (let call = 0; call < 10; call += 1) await keepAlive.request({ method: 'GET', path: '/stock' })
      // undici may open a second socket while the first is being released; never one per call
      expect(own.connections()).toBeLessThanOrEqual(2)
    } finally {
      await keepAlive.close()
      own.stop()
    }
  })

  it('when the upstream answers 402, then the error is 402 with the client error code and the upstream status as cause', async () => {
    const error = await failureOf(payment.request({ method: 'POST', path: '/status/402' }))
    expect(error).toMatchObject({
      statusCode: 402,
      code: 'PAYMENT_SERVICE_ERROR',
      message: 'upstream says 402',
    })
    expect(error.cause).toBeInstanceOf(UpstreamStatusError)
    expect(error.cause).toMatchObject({ status: 402, upstream: 'payment', upstreamCode: 'UPSTREAM_402' })
  })

  it('when the upstream answers 429, then the error is 429 RATE_LIMITED with retryAfter 30', async () => {
    const error = await failureOf(payment.request({ method: 'POST', path: '/status/429' }))
    expect(error).toMatchObject({ statusCode: 429, code: ErrorCode.RATE_LIMITED, retryAfter: 30 })
    expect(error.cause).toMatchObject({ status: 429 })
  })

  it('when the upstream answers 500 or 404, then the error is 502 with the client error code and the status as cause', async () => {
    for (const status of [500, 404, 400, 503]) {
      const error = await failureOf(payment.request({ method: 'GET', path: `/status/${status}` }))
      expect(error, String(status)).toMatchObject({ statusCode: 502, code: 'PAYMENT_SERVICE_ERROR' })
      expect(error.message).toBe('payment failed to handle the request')
      expect(error.cause).toMatchObject({ status })
    }
  })

  it("when a call relays 409 and 422, then those come back as the caller's own error with the upstream's code, message and details; other statuses map as usual", async () => {
    const relayStatuses = [409, 422]
    const conflict = await failureOf(payment.request({ method: 'POST', path: '/status/409', relayStatuses }))
    expect(conflict).toMatchObject({ statusCode: 409, code: 'UPSTREAM_409', message: 'upstream says 409' })
    expect(conflict.details).toBeUndefined()
    expect(conflict.cause).toMatchObject({ status: 409, upstreamCode: 'UPSTREAM_409' })
    const invalid = await failureOf(payment.request({ method: 'POST', path: '/status/422', relayStatuses }))
    expect(invalid).toMatchObject({
      statusCode: 422,
      code: 'UPSTREAM_422',
      details: [{ field: 'email', message: 'must be an email' }],
    })
    // not listed: the upstream failing, as without relayStatuses
    const other = await failureOf(payment.request({ method: 'POST', path: '/status/403', relayStatuses }))
    expect(other).toMatchObject({ statusCode: 502, code: 'PAYMENT_SERVICE_ERROR' })
  })

  it('when the client has its own error code, then 402 and 502 carry it', async () => {
    const shipping = client({ name: 'shipping', baseUrl: upstream.baseUrl, errorCode: ErrorCode.BAD_GATEWAY })
    expect(await failureOf(shipping.request({ method: 'GET', path: '/status/500' }))).toMatchObject({
      statusCode: 502,
      code: 'BAD_GATEWAY',
    })
    expect(await failureOf(shipping.request({ method: 'GET', path: '/status/402' }))).toMatchObject({
      statusCode: 402,
      code: 'BAD_GATEWAY',
    })
  })

  it('when the upstream never answers, then after timeoutMs the error is 503 SERVICE_UNAVAILABLE naming the upstream, not its address', async () => {
    const impatient = client({ name: 'payment', baseUrl: upstream.baseUrl, timeoutMs: 300 })
    const startedAt = Date.now()
    const error = await failureOf(impatient.request({ method: 'GET', path: '/never' }))
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(290)
    expect(error).toMatchObject({ statusCode: 503, code: ErrorCode.SERVICE_UNAVAILABLE })
    expect(error.message).toBe('payment is unavailable')
    expect(error.message).not.toContain(String(upstream.port))
    expect(error.cause).toBeInstanceOf(UpstreamTimeoutError)
  })

  it('when the upstream sends headers but stalls in the body, then the error is 503 at timeoutMs', async () => {
    const impatient = client({ name: 'payment', baseUrl: upstream.baseUrl, timeoutMs: 300 })
    const error = await failureOf(impatient.request({ method: 'GET', path: '/stalled-body' }))
    expect(error).toMatchObject({ statusCode: 503, code: ErrorCode.SERVICE_UNAVAILABLE })
  })

  it('when nothing listens on the port, then the error is 503 with the refused connection as cause', async () => {
    const port = await closedPort()
    const refused = client({ name: 'payment', baseUrl: `http://127.0.0.1:${port}` })
    const error = await failureOf(refused.request({ method: 'GET', path: '/payments' }))
    expect(error).toMatchObject({ statusCode: 503, code: ErrorCode.SERVICE_UNAVAILABLE })
    expect(error.message).toBe('payment is unavailable')
    expect(error.message).not.toContain(String(port))
    expect(JSON.stringify(error.cause, Object.getOwnPropertyNames(error.cause))).toContain('ECONNREFUSED')
  })

  it('when the host is unknown, then the error is 503 naming the upstream, not the host', async () => {
    const lost = client({ name: 'payment', baseUrl: 'http://nothing.invalid:3003' })
    const error = await failureOf(lost.request({ method: 'GET', path: '/payments' }))
    expect(error).toMatchObject({ statusCode: 503, code: ErrorCode.SERVICE_UNAVAILABLE })
    expect(error.message).not.toContain('nothing.invalid')
    expect((error.cause as { code?: string }).code).toMatch(/^(ENOTFOUND|EAI_AGAIN)$/)
  })

  it('when the upstream answers JSON that does not parse, then the error is 502', async () => {
    const error = await failureOf(payment.request({ method: 'GET', path: '/broken-json' }))
    expect(error).toMatchObject({ statusCode: 502, code: 'PAYMENT_SERVICE_ERROR' })
    expect(error.cause).toBeInstanceOf(SyntaxError)
  })

  it('when the origin is resolved per call, then each call goes where the resolver points; a failing resolver gives 503', async () => {
    const second = await startUpstreamServer('payment-2')
    const origins = [upstream.baseUrl, `${second.baseUrl}/`]
    let calls = 0
    const balanced = client({ name: 'payment', resolveOrigin: () => origins[calls++ % 2] ?? '' })
    try {
      const served = []
      for (let call = 0; call < 2; call += 1) {
        served.push(
          (await balanced.request<{ servedBy: string }>({ method: 'GET', path: '/p' })).body.servedBy,
        )
      }
      expect(served).toEqual(['payment-1', 'payment-2'])
    } finally {
      second.stop()
    }

    const noInstance = client({
      name: 'payment',
      resolveOrigin: async () => {
        throw new Error('no healthy instance of payment')
      },
    })
    expect(await failureOf(noInstance.request({ method: 'GET', path: '/p' }))).toMatchObject({
      statusCode: 503,
      message: 'payment is unavailable',
      // a proxy in front counts no failure against the service that says its dependency is away
      headers: { 'x-meridian-unavailable-dependency': 'payment' },
    })
    const ownError = client({
      name: 'payment',
      resolveOrigin: () => {
        throw AppError.serviceUnavailable('payment has no instance', 10)
      },
    })
    expect(await failureOf(ownError.request({ method: 'GET', path: '/p' }))).toMatchObject({
      statusCode: 503,
      retryAfter: 10,
    })
  })

  it('when the base URL has a path prefix, then request paths are appended to it', async () => {
    const prefixed = client({ name: 'payment', baseUrl: `${upstream.baseUrl}/api/v1/` })
    const response = await prefixed.request<{ path: string }>({ method: 'GET', path: '/payments' })
    expect(response.body.path).toBe('/api/v1/payments')
  })

  it('when the caller cancels, then the call rejects with the abort reason rather than an upstream error', async () => {
    const controller = new AbortController()
    const call = payment.request({ method: 'GET', path: '/never', signal: controller.signal })
    setTimeout(() => controller.abort(new Error('client went away')), 50)
    await expect(call).rejects.toThrow('client went away')
  })
})
