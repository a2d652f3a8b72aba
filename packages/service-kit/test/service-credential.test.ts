// The service credential on /internal/ routes: the chassis' check (raw requests at a listening app), rotation, what
// the logs and the OpenAPI document show, and the upstream client that sends it.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  captureLogs,
  expectErrorEnvelope,
  rawExchange,
  rawHttpAnswer,
  rawJsonPost,
  uniqueName,
} from '@meridian/testkit'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createServiceApp,
  createUpstreamClient,
  type ServiceApp,
  serviceCredentialMessages,
  serviceCredentialVerifier,
} from '../src/index.ts'

const current = 'current-service-credential-0123456789abcdefghij'
const previous = 'previous-service-credential-0123456789abcdefghi'

async function appWithInternalRoute(serviceCredential: string | undefined) {
  const { stream, lines } = captureLogs()
  const app = await createServiceApp({
    name: uniqueName('internal'),
    version: '1.0.0',
    environment: 'test',
    logLevel: 'info',
    logStream: stream,
    rateLimit: false,
    ...(serviceCredential === undefined ? {} : { serviceCredential }),
  })
  let handled = 0
  app.post(
    '/internal/echo',
    {
      schema: {
        body: Type.Object({ word: Type.String() }),
        response: { 200: Type.Object({ word: Type.String() }) },
      },
    },
    async (request) => {
      handled += 1
      return { word: request.body.word }
    },
  )
  app.post('/api/v1/echo', async (request) => request.body)
  return { app, logs: lines, handled: () => handled }
}

describe('the chassis on /internal/ routes', () => {
  let built: Awaited<ReturnType<typeof appWithInternalRoute>>
  let app: ServiceApp
  let port: number

  beforeAll(async () => {
    // rotation: the current credential first, the previous one still accepted
    built = await appWithInternalRoute(`${current},${previous}`)
    app = built.app
    await app.listen({ host: '127.0.0.1', port: 0 })
    port = (app.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    await app?.close()
  })

  const echo = (headers: [string, string][], body: unknown = { word: 'hello' }) =>
    rawJsonPost(port, '/internal/echo', body, headers)

  it('when a request carries no credential, then 401 in the envelope and the route never runs', async () => {
    const before = built.handled()
    const error = expectErrorEnvelope(await echo([]), 401, 'UNAUTHORIZED')
    expect(error.message).toBe(serviceCredentialMessages.missing)
    const empty = expectErrorEnvelope(await echo([['X-Service-Credential', '']]), 401, 'UNAUTHORIZED')
    expect(empty.message).toBe(serviceCredentialMessages.missing)
    expect(built.handled()).toBe(before)
  })

  it('when a request carries a wrong credential (shorter, longer, off by one character, a bearer token, twice), then 401', async () => {
    const before = built.handled()
    for (const headers of [
      [['X-Service-Credential', 'short']],
      [['X-Service-Credential', `${current}x`]],
      [['X-Service-Credential', `${current.slice(0, -1)}X`]],
      [['X-Service-Credential', current.toUpperCase()]],
      [['Authorization', `Bearer ${current}`]],
      [
        ['X-Service-Credential', current],
        ['X-Service-Credential', previous],
      ],
    ] as [string, string][][]) {
      const context = headers.map(([name, value]) => `${name}: ${value.slice(0, 12)}…`).join(', ')
      const error = expectErrorEnvelope(await echo(headers), 401, 'UNAUTHORIZED', { context })
      expect(error.message, context).toMatch(/^(Invalid service credential|Service credential required)$/)
    }
    expect(built.handled()).toBe(before)
  })

  it('when the credential is refused, then the body is never read: a malformed one is still 401, not 400', async () => {
    const body = '{"word":'
    const answer = await rawExchange(
      port,
      `POST /internal/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    )
    expectErrorEnvelope(rawHttpAnswer(answer), 401, 'UNAUTHORIZED')
  })

  it('when a request carries the current or the previous credential, then the route answers', async () => {
    for (const credential of [current, previous]) {
      const answer = await echo([['X-Service-Credential', credential]], { word: credential.slice(0, 7) })
      expect(answer.statusCode).toBe(200)
      expect(answer.json()).toEqual({ word: credential.slice(0, 7) })
    }
  })

  it('when a route is not under /internal/, then no credential is asked for', async () => {
    const answer = await rawJsonPost(port, '/api/v1/echo', { word: 'public' })
    expect(answer.statusCode).toBe(200)
  })

  it('when requests with credentials are logged, then the credential never appears, right or wrong', async () => {
    await echo([['X-Service-Credential', current]])
    await echo([['X-Service-Credential', `${previous}-wrong`]])
    const logged = JSON.stringify(built.logs)
    expect(logged).not.toContain(current)
    expect(logged).not.toContain(previous)
    expect(
      built.logs.some((line) => JSON.stringify(line).includes('"x-service-credential":"[Redacted]"')),
    ).toBe(true)
  })

  it('when the OpenAPI document is read, then the internal route names the serviceCredential scheme and its 401', async () => {
    const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
    const operation = document.paths['/internal/echo'].post
    expect(operation.security).toEqual([{ serviceCredential: [] }])
    expect(operation.responses).toHaveProperty('401')
    expect(document.components.securitySchemes.serviceCredential).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-service-credential',
    })
    expect(document.paths['/api/v1/echo'].post.security).toBeUndefined()
  })
})

describe('an app without a service credential', () => {
  it('when it declares an /internal/ route, then it fails to start instead of serving the route open', async () => {
    let app: ServiceApp | undefined
    const starting = (async () => {
      app = (await appWithInternalRoute(undefined)).app
      await app.ready()
    })()
    await expect(starting).rejects.toThrow(
      /\/internal\/echo is an internal route, but the app has no service credential/,
    )
    await app?.close()
  })
})

describe('serviceCredentialVerifier', () => {
  it('when values are compared, then only an exact entry of the list matches', () => {
    const verify = serviceCredentialVerifier(` ${current} , ${previous} `)
    expect(verify(current)).toBe(true)
    expect(verify(previous)).toBe(true)
    expect(verify('')).toBe(false)
    expect(verify(`${current},${previous}`)).toBe(false)
    expect(() => serviceCredentialVerifier(' , ')).toThrow(/no credential/)
  })
})

describe('the upstream client and the service credential', () => {
  const received: { url: string; headers: IncomingHttpHeaders }[] = []
  const server = createServer((request, response) => {
    received.push({ url: request.url ?? '', headers: request.headers })
    request.resume()
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
  let baseUrl: string
  beforeAll(async () => {
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => {
    server.closeAllConnections()
    server.close()
  })

  const headerOf = (url: string) =>
    received.findLast((request) => request.url === url)?.headers['x-service-credential']

  it('when it calls an /internal/ path, then it sends the first configured credential; elsewhere, none', async () => {
    const inventory = createUpstreamClient({
      name: 'inventory',
      baseUrl,
      serviceCredential: `${current},${previous}`,
    })
    try {
      await inventory.request({ method: 'POST', path: '/internal/products/lookup', body: {} })
      await inventory.request({ method: 'GET', path: '/api/v1/products' })
      // a caller's own header cannot replace it
      await inventory.request({
        method: 'POST',
        path: '/internal/other',
        headers: { 'x-service-credential': 'chosen-by-the-caller' },
      })
    } finally {
      await inventory.close()
    }
    expect(headerOf('/internal/products/lookup')).toBe(current)
    expect(headerOf('/api/v1/products')).toBeUndefined()
    expect(headerOf('/internal/other')).toBe(current)
  })

  it('when it has no credential (a third party, such as the payment provider), then it never sends one', async () => {
    const provider = createUpstreamClient({ name: 'provider', baseUrl })
    try {
      await provider.request({ method: 'POST', path: '/internal/charges', body: {} })
    } finally {
      await provider.close()
    }
    expect(headerOf('/internal/charges')).toBeUndefined()
  })
})
