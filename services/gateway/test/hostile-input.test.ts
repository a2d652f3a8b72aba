// Hostile requests at the edge: paths whose percent-encoding does not decode, methods no route implements, secrets in
// query strings. The gateway answers them itself in the error envelope, and logs no secret, proxied or not.
import { request as httpRequest } from 'node:http'
import { expectErrorEnvelope, fetchedAnswer, httpAnswer, scaledMs, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, type TestGateway } from './support/gateway.ts'
import { type SingleUpstream, startSingleUpstream } from './support/single-upstream.ts'
import type { UpstreamProcess } from './support/upstream-process.ts'

const users = uniqueName('gw-hostile-users')

let setup: SingleUpstream
let gateway: TestGateway
let upstream: UpstreamProcess

beforeAll(async () => {
  setup = await startSingleUpstream(users, 'users')
  ;({ gateway, upstream } = setup)
}, scaledMs(60_000))

afterAll(async () => {
  await setup?.close()
})

interface RawAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
}

/** A request with node:http, path and method sent as they are (fetch would re-encode the one and refuse the other). */
function rawRequest(path: string, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port: gateway.port, path, method }, (incoming) => {
      let text = ''
      incoming.setEncoding('utf8')
      incoming.on('data', (chunk: string) => {
        text += chunk
      })
      incoming.on('error', reject)
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text }))
    })
    outgoing.on('error', reject)
    outgoing.end()
  })
}

/** The error fields these refusals carry: the required ones, no details or retryAfter beside them. */
const envelopeKeys = ['code', 'message', 'requestId', 'timestamp']

describe('malformed percent-encoding', () => {
  it('when a routed path has a lone %, then the gateway answers 400 in the error envelope', async () => {
    for (const path of ['/api/v1/users/%', '/api/v1/users/%zz/orders', '/api/v1/users/%E0%A4%A']) {
      const answer = await rawRequest(path)
      const error = expectErrorEnvelope(httpAnswer(answer), 400, 'BAD_REQUEST', { context: path })
      expect(Object.keys(error).sort(), path).toEqual(envelopeKeys)
      expect(answer.text).not.toContain('FST_ERR_BAD_URL')
    }
    // refused at the edge: the service never saw them
    const hits = await upstream.hits()
    expect(Object.keys(hits).filter((key) => key.includes('%'))).toEqual([])
  })

  it('when a path no route knows has a lone %, then the answer is the same 400 envelope', async () => {
    const answer = await rawRequest('/nowhere/%')
    expectErrorEnvelope(httpAnswer(answer), 400, 'BAD_REQUEST')
    expect(answer.text).not.toContain('FST_ERR_BAD_URL')
  })

  it('when only the query has a lone %, then the request is proxied and the service answers it', async () => {
    const answer = await rawRequest('/api/v1/users/items/7?filter=%')
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.text)).toEqual({ id: '7', url: '/api/v1/users/items/7?filter=%' })
  })
})

describe('hostile JSON bodies', () => {
  /** A POST with node:http, its body sent as the bytes given. */
  function post(path: string, body: Buffer): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: '127.0.0.1',
          port: gateway.port,
          path,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
        },
        (incoming) => {
          let text = ''
          incoming.setEncoding('utf8')
          incoming.on('data', (chunk: string) => {
            text += chunk
          })
          incoming.on('end', () =>
            resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text }),
          )
        },
      )
      outgoing.on('error', reject)
      outgoing.end(body)
    })
  }

  it('when a proxied body is not UTF-8 or nested too deep, then the service refuses it and the gateway relays its envelope', async () => {
    const notUtf8 = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])
    const deep = (levels: number) => Buffer.from(`${'['.repeat(levels)}${']'.repeat(levels)}`)
    for (const body of [notUtf8, deep(100), deep(10_000), deep(100_000)]) {
      const answer = await post('/api/v1/users/echo', body)
      const error = expectErrorEnvelope(httpAnswer(answer), 400, 'BAD_REQUEST')
      expect(Object.keys(error).sort()).toEqual(envelopeKeys)
    }
    // a client's bad body is no failure of the instance
    expect(setup.status()).toMatchObject({ ejected: [], circuit: 'closed' })
  })
})

describe('NUL characters through the gateway', () => {
  it('when a proxied text field holds a NUL character, then the service answers 422 naming the field, relayed as is', async () => {
    const answer = await fetch(`http://127.0.0.1:${gateway.port}/api/v1/users/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"title":"a\\u0000b"}',
    })
    expect(expectErrorEnvelope(await fetchedAnswer(answer), 422, 'VALIDATION_ERROR').details).toEqual([
      expect.objectContaining({ field: 'title', message: 'must not contain NUL characters' }),
    ])
    expect(setup.status()).toMatchObject({ ejected: [], circuit: 'closed' })
  })
})

describe('methods no route implements', () => {
  it('when a request uses PROPFIND, QUERY or another unknown method, then the gateway answers 501 in the envelope', async () => {
    for (const method of ['PROPFIND', 'QUERY', 'MKCOL', 'TRACE']) {
      for (const path of ['/api/v1/users/whoami', '/nowhere', '/health']) {
        const answer = await rawRequest(path, method)
        const error = expectErrorEnvelope(httpAnswer(answer), 501, 'NOT_IMPLEMENTED', {
          context: `${method} ${path}`,
        })
        expect(Object.keys(error).sort(), `${method} ${path}`).toEqual(envelopeKeys)
      }
    }
    const hits = await upstream.hits()
    expect(
      Object.keys(hits).filter((key) => !/^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /.test(key)),
    ).toEqual([])
  })

  it('when a known method is not served at a path, then it is still 404 or 405, not 501', async () => {
    expect((await rawRequest('/health', 'DELETE')).status).toBe(405)
    expect((await rawRequest('/nowhere', 'PATCH')).status).toBe(404)
  })
})

describe('secrets in query strings', () => {
  const secrets = {
    access_token: 'leak-access-6f1a',
    token: 'leak-token-93bd',
    code: 'leak-code-27c4',
    refresh_token: 'leak-refresh-5e80',
    client_secret: 'leak-client-0d2f',
  }
  const query = `${new URLSearchParams(secrets).toString()}&page=2`
  const leaked = (lines: Record<string, unknown>[]) => {
    const text = JSON.stringify(lines)
    return Object.values(secrets).filter((secret) => text.includes(secret))
  }

  it('when a proxied request carries OAuth secrets in its query, then neither the gateway nor the service logs them', async () => {
    const answer = await rawRequest(`/api/v1/users/whoami?${query}`, 'GET')
    expect(answer.status).toBe(200)
    const requestId = String(answer.headers['x-request-id'])
    const url = gateway.logs
      .filter((line) => line.requestId === requestId)
      .map((line) => (line.req as { url?: string } | undefined)?.url)
      .find((logged) => logged !== undefined)
    for (const name of Object.keys(secrets)) expect(url).toContain(`${name}=[Redacted]`)
    expect(url).toContain('page=2')
    await eventually(() => upstream.logs.some((line) => line.requestId === requestId))
    expect(leaked(gateway.logs)).toEqual([])
    expect(leaked(upstream.logs)).toEqual([])
  })

  it('when a request the gateway refuses carries secrets in its query, then its logs hold none of them', async () => {
    const refused = [
      ['/nowhere', 'GET', 404],
      ['/api/v1/users/%', 'GET', 400],
      ['/api/v1/users/../hits', 'GET', 400],
      ['/api/v1/users/whoami', 'PROPFIND', 501],
    ] as const
    for (const [path, method, status] of refused) {
      const answer = await rawRequest(`${path}?${query}`, method)
      expect({ path, method, status: answer.status }).toEqual({ path, method, status })
    }
    expect(leaked(gateway.logs)).toEqual([])
  })
})
