// The chassis against hostile input: absurd nesting, invalid UTF-8, NUL characters, broken URLs, unknown methods,
// malformed HTTP; each is a clear 4xx/5xx in the envelope, and the error path never throws.
import { connect } from 'node:net'
import { expectErrorEnvelope, fetchedAnswer, rawHttpAnswer } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceApp } from '../src/index.ts'
import { jsonDepthExceeds, maxJsonDepth } from '../src/json-body.ts'
import { buildChassisApp, type ChassisApp } from './chassis-app.ts'

const json = { 'content-type': 'application/json' }

/** `{"a":{"a":…}}` or `[[[…]]]` nested `levels` deep. */
const nestedObject = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`
const nestedArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`

describe('chassis: hostile bodies', () => {
  let chassis: ChassisApp
  beforeAll(async () => {
    chassis = await buildChassisApp({ environment: 'development' })
  })
  afterAll(async () => {
    await chassis.app.close()
  })

  const post = (url: string, payload: string | Buffer) =>
    chassis.app.inject({ method: 'POST', url, headers: json, payload })

  for (const levels of [10_000, 100_000]) {
    it(`when a JSON body is nested ${levels} levels deep (objects or arrays), then 400 BAD_REQUEST in the envelope, never a 500`, async () => {
      for (const body of [nestedObject(levels), nestedArray(levels)]) {
        for (const url of ['/api/v1/widgets', '/api/v1/notes']) {
          const error = expectErrorEnvelope(await post(url, body), 400, 'BAD_REQUEST')
          expect(error.message).toBe(`JSON nested deeper than ${maxJsonDepth} levels`)
        }
      }
    })
  }

  it('when a body is nested just within the limit, then it is parsed and validated as usual (422 for a wrong shape)', async () => {
    const error = expectErrorEnvelope(
      await post('/api/v1/notes', `{"title":${nestedArray(maxJsonDepth - 1)}}`),
      422,
      'VALIDATION_ERROR',
    )
    expect(error.details).toEqual([expect.objectContaining({ field: 'title', message: 'must be string' })])
  })

  it('when brackets appear inside strings, then they do not count as nesting', () => {
    expect(jsonDepthExceeds(`{"a":"${'['.repeat(1000)}\\"${'{'.repeat(1000)}"}`, 2)).toBe(false)
    expect(jsonDepthExceeds('[[[]]]', 2)).toBe(true)
    expect(jsonDepthExceeds('[[]]', 2)).toBe(false)
  })

  it('when a JSON body is not valid UTF-8, then 400 BAD_REQUEST, and nothing is stored with replacement characters', async () => {
    const invalid = Buffer.concat([
      Buffer.from('{"title":"caf'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}'),
    ])
    const overlong = Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])
    const surrogate = Buffer.concat([
      Buffer.from('{"title":"'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}'),
    ])
    for (const body of [invalid, overlong, surrogate]) {
      const error = expectErrorEnvelope(await post('/api/v1/notes', body), 400, 'BAD_REQUEST')
      expect(error.message).toBe('Request body is not valid UTF-8')
    }
    // valid multi-byte text is fine
    const ok = await post('/api/v1/notes', Buffer.from('{"title":"café ☕ 𝄞"}'))
    expect(ok.statusCode).toBe(201)
    expect(ok.json()).toEqual({ title: 'café ☕ 𝄞' })
  })

  it('when a text field holds a NUL character, then 422 VALIDATION_ERROR naming the field (body and query alike)', async () => {
    const inTitle = expectErrorEnvelope(
      await post('/api/v1/notes', '{"title":"a\\u0000b"}'),
      422,
      'VALIDATION_ERROR',
    )
    expect(inTitle.details).toEqual([
      { field: 'title', message: 'must not contain NUL characters', received: 'a\u0000b' },
    ])
    const inTag = expectErrorEnvelope(
      await post('/api/v1/notes', '{"title":"ok","tags":["fine","\\u0000"]}'),
      422,
      'VALIDATION_ERROR',
    )
    expect(inTag.details).toEqual([
      expect.objectContaining({ field: 'tags.1', message: 'must not contain NUL characters' }),
    ])
    const inQuery = await chassis.app.inject({
      method: 'POST',
      url: '/api/v1/notes?q=%00',
      headers: json,
      payload: '{"title":"ok"}',
    })
    expect(expectErrorEnvelope(inQuery, 422, 'VALIDATION_ERROR').details).toEqual([
      expect.objectContaining({ field: 'q', message: 'must not contain NUL characters' }),
    ])
  })

  it('when a rejected value is huge, then the details echo at most its first 200 characters', async () => {
    const error = expectErrorEnvelope(
      await post('/api/v1/notes', JSON.stringify({ title: 'x'.repeat(100_000) })),
      422,
      'VALIDATION_ERROR',
    )
    const [detail] = error.details as { received: string }[]
    expect(detail?.received.length).toBeLessThanOrEqual(201)
  })

  it('when the service runs in development, then a 501 (an answer, not a fault) still carries no stack', async () => {
    const response = await chassis.app.inject({ method: 'PROPFIND' as 'GET', url: '/api/v1/widgets/1' })
    // without { stack: true } the assertion fails on any error.stack
    expectErrorEnvelope(response, 501, 'NOT_IMPLEMENTED')
  })

  it('when a body carries __proto__, then 400 BAD_REQUEST (prototype poisoning refused)', async () => {
    expectErrorEnvelope(
      await post('/api/v1/notes', '{"title":"x","__proto__":{"admin":true}}'),
      400,
      'BAD_REQUEST',
    )
  })
})

describe('chassis: hostile URLs, methods and requests', () => {
  let chassis: ChassisApp
  let port: number
  beforeAll(async () => {
    chassis = await buildChassisApp()
    await chassis.app.listen({ host: '127.0.0.1', port: 0 })
    port = (chassis.app.server.address() as { port: number }).port
  })
  afterAll(async () => {
    await chassis.app.close()
  })

  it('when a path has malformed percent-encoding, then 400 BAD_REQUEST in the envelope with the request id', async () => {
    for (const url of ['/api/v1/widgets/%', '/api/v1/widgets/%E0%A4%A', '/api/v1/widgets/%zz']) {
      const response = await chassis.app.inject({
        method: 'GET',
        url,
        headers: { 'x-request-id': 'bad-url-1' },
      })
      const error = expectErrorEnvelope(response, 400, 'BAD_REQUEST')
      expect(error.requestId).toBe('bad-url-1')
      expect(response.body).not.toContain('FST_ERR')
    }
  })

  it('when a method the server does not implement is used (QUERY, PROPFIND, TRACE), then 501 NOT_IMPLEMENTED', async () => {
    for (const method of ['QUERY', 'PROPFIND', 'MKCOL']) {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/widgets/1`, { method })
      expectErrorEnvelope(await fetchedAnswer(response), 501, 'NOT_IMPLEMENTED', { context: method })
    }
  })

  it('when a known method is not allowed on a route, then 405 with Allow (not 501)', async () => {
    const response = await chassis.app.inject({ method: 'PUT', url: '/api/v1/widgets/1' })
    expectErrorEnvelope(response, 405, 'METHOD_NOT_ALLOWED')
    expect(response.headers.allow).toBe('GET, HEAD')
  })

  /** Sends raw bytes on a socket and reads the whole answer. */
  function raw(request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request))
      let answer = ''
      socket.on('data', (chunk) => {
        answer += chunk.toString()
      })
      socket.on('close', () => resolve(answer))
      socket.on('error', reject)
    })
  }

  it('when the method is not HTTP at all, then 501 NOT_IMPLEMENTED in the envelope, written by the parser handler', async () => {
    const answer = await raw('FOO /api/v1/widgets/1 HTTP/1.1\r\nHost: x\r\n\r\n')
    expect(answer).toMatch(/^HTTP\/1\.1 501 /)
    expectErrorEnvelope(rawHttpAnswer(answer), 501, 'NOT_IMPLEMENTED')
  })

  it('when the request line is garbage, then 400 BAD_REQUEST in the envelope', async () => {
    const answer = await raw('GET /\x01 nonsense\r\n\r\n')
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expectErrorEnvelope(rawHttpAnswer(answer), 400, 'BAD_REQUEST')
  })

  it('when the headers are too large, then 431 HEADERS_TOO_LARGE in the envelope', async () => {
    const answer = await raw(
      `GET /api/v1/widgets/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 431 /)
    expectErrorEnvelope(rawHttpAnswer(answer), 431, 'HEADERS_TOO_LARGE')
  })

  it('when an OAuth secret or token travels in a URL, then the logs show the URL with it masked and never the value', async () => {
    const secret = 'leak-9f8e7d6c5b4a'
    const query = [
      'access_token',
      'token',
      'code',
      'refresh_token',
      'client_secret',
      'id_token_hint',
      'password',
    ]
      .map((name, index) => `${name}=${secret}-${index}`)
      .join('&')
    await chassis.app.inject({ method: 'GET', url: `/api/v1/widgets/1?page=2&${query}` })
    await chassis.app.inject({ method: 'GET', url: `/api/v1/nowhere?Access_Token=${secret}` })
    expect(JSON.stringify(chassis.logs)).not.toContain(secret)
    const urls = chassis.logs.map((line) => (line.req as { url?: string } | undefined)?.url).filter(Boolean)
    expect(urls).toContain(
      '/api/v1/widgets/1?page=2&access_token=[Redacted]&token=[Redacted]&code=[Redacted]&refresh_token=[Redacted]' +
        '&client_secret=[Redacted]&id_token_hint=[Redacted]&password=[Redacted]',
    )
  })
})

describe('chassis: a client that stalls mid-upload', () => {
  it('when a client stops sending its body, then after the request timeout it gets 408 REQUEST_TIMEOUT and the connection closes', async () => {
    const app = await createServiceApp({
      name: 'stalled-upload',
      version: '1.0.0',
      environment: 'test',
      logLevel: 'silent',
      rateLimit: false,
      requestTimeoutMs: 300,
    })
    app.post('/upload', async () => ({ ok: true }))
    await app.listen({ host: '127.0.0.1', port: 0 })
    try {
      const { port } = app.server.address() as { port: number }
      // no stopwatch: the server holds the timeout asked for (the chassis's default is 30 s), and it is what answers
      expect(app.server.requestTimeout).toBe(300)
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(
            'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
          ),
        )
        let text = ''
        socket.on('data', (chunk) => {
          text += chunk.toString()
        })
        socket.on('close', () => resolve(text))
        socket.on('error', reject)
      })
      expect(answer).toMatch(/^HTTP\/1\.1 408 /)
      expectErrorEnvelope(rawHttpAnswer(answer), 408, 'REQUEST_TIMEOUT')
    } finally {
      await app.close()
    }
  })
})
