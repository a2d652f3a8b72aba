// Upgrades at the gateway, driven over raw sockets against upstreams found in the real Consul: only a WebSocket
// handshake on a WebSocket route is passed through, and its sockets are piped only after the service's 101. An Upgrade
// anywhere else is plain HTTP; an answer that is not a 101 is relayed and both connections end; a broken answer head
// is a 502 or a 504. What reached the service is read from the service's own record of the bytes it received.
import { expectErrorEnvelope, httpAnswer, scaledMs, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import type { GatewayRoute } from '../src/app.ts'
import { eventually, startGateway, type TestGateway } from './support/gateway.ts'
import { connectRaw, type RawAnswer, type RawClient } from './support/raw-client.ts'
import {
  jsonAnswer,
  type RawUpstream,
  startRawUpstream,
  switchingProtocols,
  writeInPieces,
} from './support/raw-upstream.ts'
import { startUpstream, type UpstreamProcess } from './support/upstream-process.ts'

const echoName = uniqueName('gw-echo')
const allowedOrigin = 'https://shop.example.com'
const refusal = { success: false, error: { code: 'UNAUTHORIZED', message: 'Authentication required' } }

let raw: RawUpstream
let echo: UpstreamProcess
let routes: GatewayRoute[]
let gateway: TestGateway
const gateways: TestGateway[] = []
const clients: RawClient[] = []

/** A gateway on the test's routes that sees both upstreams; `env` on top of the test defaults. */
async function gatewayWith(env: Record<string, string>): Promise<TestGateway> {
  const started = await startGateway({ routes, env })
  gateways.push(started)
  await eventually(
    () =>
      started.app.upstreams.get(raw.name)?.status()?.instances === 1 &&
      started.app.upstreams.get(echoName)?.status()?.instances === 1,
  )
  return started
}

async function client(target: TestGateway = gateway): Promise<RawClient> {
  const opened = await connectRaw(target.port)
  clients.push(opened)
  return opened
}

function request(method: string, path: string, headers: Record<string, string> = {}, body = ''): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'host: gateway.test']
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
  if (body !== '') lines.push(`content-length: ${Buffer.byteLength(body)}`)
  return `${lines.join('\r\n')}\r\n\r\n${body}`
}

/** A WebSocket opening handshake (RFC 6455 §4.1) as a browser sends it. */
const handshake = (path: string, headers: Record<string, string> = {}) =>
  request('GET', path, {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    'sec-websocket-version': '13',
    ...headers,
  })

const introspect = (marker: string) =>
  request(
    'POST',
    `/internal/api-keys/introspect?case=${marker}`,
    { 'content-type': 'application/json' },
    '{}',
  )

/** The service's connection that carried `marker`. */
const connectionWith = (marker: string) =>
  raw.connections.find((connection) => connection.received.includes(marker))
const headWith = (marker: string) => raw.heads().find((head) => head.includes(marker))

const envelope = (answer: RawAnswer, status: number, code: string) =>
  expectErrorEnvelope(
    httpAnswer({ status: answer.status, headers: answer.headers, text: answer.body }),
    status,
    code,
  )

beforeAll(async () => {
  ;[raw, echo] = await Promise.all([
    startRawUpstream((path) => {
      if (path.startsWith('/raw/accept')) return { switch: [switchingProtocols] }
      if (path.startsWith('/raw/split')) {
        const [first, second] = ['HTTP/1.1 10', '1 Switching Protocols\r\nupgrade: websocket\r\n']
        return {
          switch: [first, second, 'connection: Upgrade\r\nsec-websocket-accept: test\r\n\r\n'],
          gapMs: 30,
        }
      }
      if (path.startsWith('/raw/refuse-split')) {
        const whole = jsonAnswer(404, 'Not Found', refusal)
        return {
          script: (socket) =>
            void writeInPieces(socket, [whole.slice(0, 12), whole.slice(12, 60), whole.slice(60)], 30),
        }
      }
      if (path.startsWith('/raw/refuse')) return { answer: jsonAnswer(401, 'Unauthorized', refusal) }
      if (path.startsWith('/raw/oversized')) {
        return {
          script: (socket) =>
            socket.write(`HTTP/1.1 101 Switching Protocols\r\nx-filler: ${'a'.repeat(20_000)}\r\n`),
        }
      }
      if (path.startsWith('/raw/trickle')) {
        return {
          script(socket) {
            socket.write('HTTP/1.1 101 Switching Protocols\r\n')
            const more = setInterval(() => socket.write('x-more: a\r\n'), 100)
            socket.once('close', () => clearInterval(more))
          },
        }
      }
      if (path.startsWith('/raw/garbage'))
        return { script: (socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n\r\n') }
      if (path.startsWith('/raw/hangup')) return { script: (socket) => socket.destroy() }
      return { answer: jsonAnswer(200, 'OK', { path }) }
    }),
    startUpstream({ name: echoName, label: 'e', segment: 'echo' }),
  ])
  routes = [
    { prefix: '/raw', service: raw.name, websocket: true },
    { prefix: '/login', service: raw.name },
    { prefix: '/ws', service: echoName, websocket: true },
  ]
  // broken answers below must not eject the only instance for the tests after them (ejection has its own test)
  gateway = await gatewayWith({
    CORS_ORIGINS: allowedOrigin,
    EJECT_AFTER_FAILURES: '100',
    BREAKER_FAILURE_THRESHOLD: '1000',
  })
}, scaledMs(60_000))

afterAll(async () => {
  for (const opened of clients) opened.destroy()
  await Promise.all(gateways.map((started) => started.close()))
  await raw?.close()
  await echo?.stop()
  await echo?.deregister()
})

describe('an Upgrade on a plain HTTP route', () => {
  it('when a client asks for a WebSocket on a plain route, then it is served as plain HTTP and the next request on the connection is routed by the gateway itself', async () => {
    const socket = await client()
    socket.write(handshake('/login?case=plain-1'))
    const first = await socket.nextAnswer()
    expect(first.status).toBe(200)
    expect(JSON.parse(first.body)).toEqual({ path: '/login?case=plain-1' })
    expect(first.headers.connection).toBe('keep-alive')
    // the service was asked for no upgrade
    const head = headWith('case=plain-1')
    expect(head).toBeDefined()
    expect(head).not.toMatch(/^upgrade:/im)
    expect(head).not.toMatch(/^connection:.*upgrade/im)

    // the next requests on the same connection meet the route table: /internal and an unknown path are the gateway's 404
    socket.write(introspect('plain-1'))
    const internal = await socket.nextAnswer()
    expect(envelope(internal, 404, 'NOT_FOUND').message).toBe(
      'Route POST /internal/api-keys/introspect not found',
    )
    socket.write(request('GET', '/nowhere?case=plain-1'))
    envelope(await socket.nextAnswer(), 404, 'NOT_FOUND')
    expect(raw.everything()).not.toContain('/internal/api-keys/introspect?case=plain-1')
    expect(raw.everything()).not.toContain('/nowhere?case=plain-1')
  })

  it('when another request comes right behind the upgrade request in the same write, then it never reaches the service', async () => {
    const socket = await client()
    socket.write(handshake('/login?case=plain-2') + introspect('plain-2'))
    const first = await socket.nextAnswer()
    expect(JSON.parse(first.body)).toEqual({ path: '/login?case=plain-2' })
    // a request of the same connection after it: whatever became of the one behind the upgrade happened before
    socket.write(request('GET', '/login?case=plain-2-after'))
    for (;;) {
      const next = await socket.nextAnswer()
      if (next.status === 200) {
        expect(JSON.parse(next.body)).toEqual({ path: '/login?case=plain-2-after' })
        break
      }
      // (Node drops what followed the upgrade request in its chunk; if it came apart, it met the route table)
      envelope(next, 404, 'NOT_FOUND')
    }
    expect(raw.everything()).not.toContain('/internal/api-keys/introspect?case=plain-2')
  })

  it.each([
    [
      'an h2c upgrade on a WebSocket route',
      request('GET', '/raw/plain?case=h2c', {
        connection: 'Upgrade, HTTP2-Settings',
        upgrade: 'h2c',
        'http2-settings': 'AAMAAABkAAQAAP__',
      }),
      'case=h2c',
    ],
    [
      'a POST asking for a WebSocket on a WebSocket route',
      request(
        'POST',
        '/raw/plain?case=post',
        { connection: 'Upgrade', upgrade: 'websocket', 'content-type': 'application/json' },
        '{}',
      ),
      'case=post',
    ],
  ])(
    'when %s comes, then it is plain HTTP: the service is asked for no upgrade',
    async (_what, sent, marker) => {
      const socket = await client()
      socket.write(sent)
      const answer = await socket.nextAnswer()
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body).path).toContain(marker)
      const head = headWith(marker)
      expect(head).not.toMatch(/^upgrade:/im)
      expect(head).not.toMatch(/^http2-settings:/im)
    },
  )

  it('when a Node hands every upgrade to the gateway (before 22.21 and 24.9), then one on a plain route is refused with 400 and the connection closed, the service untouched', async () => {
    const legacy = await gatewayWith({})
    // what such a Node does: no shouldUpgradeCallback, every Upgrade request goes to the `upgrade` listener
    ;(legacy.app.server as unknown as { shouldUpgradeCallback: () => boolean }).shouldUpgradeCallback = () =>
      true
    const socket = await client(legacy)
    socket.write(handshake('/login?case=legacy') + introspect('legacy'))
    const answer = await socket.nextAnswer()
    envelope(answer, 400, 'BAD_REQUEST')
    expect(answer.headers.connection).toBe('close')
    await socket.closed()
    expect(raw.everything()).not.toContain('case=legacy')

    // a WebSocket route still switches
    const accepted = await client(legacy)
    accepted.write(handshake('/raw/accept?case=legacy-ws'))
    expect((await accepted.nextAnswer()).status).toBe(101)
  })
})

describe('an upgrade the service does not accept', () => {
  it('when the service answers 401 on a keep-alive connection, then the client gets it with Connection: close, both connections end, and later bytes never reach the service', async () => {
    const socket = await client()
    socket.write(handshake('/raw/refuse?case=refused-1', { origin: allowedOrigin }))
    const answer = await socket.nextAnswer()
    // bytes the client sends once the answer is in, before the connection is seen closed
    socket.write(introspect('refused-1-after'))
    expect(answer.status).toBe(401)
    expect(JSON.parse(answer.body)).toEqual(refusal)
    expect(answer.headers.connection).toBe('close')
    expect(answer.headers['x-request-id']).toMatch(/\S/)
    // the edge's CORS headers, as on any answer to an allowed origin
    expect(answer.headers['access-control-allow-origin']).toBe(allowedOrigin)
    await socket.closed()
    const upstream = connectionWith('case=refused-1')
    await eventually(() => upstream?.closed === true)
    expect(upstream?.received.match(/ HTTP\/1\.1\r\n/g)).toHaveLength(1)
    // the service got the browser's Origin (its own allow-list decides on it)
    expect(headWith('case=refused-1')).toMatch(new RegExp(`^origin: ${allowedOrigin}$`, 'im'))
    expect(raw.everything()).not.toContain('refused-1-after')
  })

  it('when the client sends a request right behind its upgrade request, then it is held and dropped with the refusal', async () => {
    const socket = await client()
    socket.write(handshake('/raw/refuse?case=refused-2') + introspect('refused-2-behind'))
    expect((await socket.nextAnswer()).status).toBe(401)
    await socket.closed()
    await eventually(() => connectionWith('case=refused-2')?.closed === true)
    expect(raw.everything()).not.toContain('refused-2-behind')
  })

  it('when the refusal comes in pieces, then the client gets it whole, and then the connection ends', async () => {
    const socket = await client()
    socket.write(handshake('/raw/refuse-split?case=refused-3'))
    const answer = await socket.nextAnswer()
    expect(answer.status).toBe(404)
    expect(JSON.parse(answer.body)).toEqual(refusal)
    await socket.closed()
    await eventually(() => connectionWith('case=refused-3')?.closed === true)
  })
})

describe('an upgrade the service accepts', () => {
  it('when a client opens a WebSocket through the gateway, then text and binary messages go both ways until it closes', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/ws`, {
      headers: { 'x-request-id': 'upgrade-ws-1' },
    })
    const messages: (string | Buffer)[] = []
    socket.on('message', (data, binary) => messages.push(binary ? (data as Buffer) : String(data)))
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    await eventually(() => messages.length >= 1)
    expect(JSON.parse(messages[0] as string)).toEqual({ instance: 'e', requestId: 'upgrade-ws-1' })
    socket.send('hello')
    socket.send(Buffer.from([0, 1, 2, 255]))
    await eventually(() => messages.length >= 3)
    expect(messages.slice(1)).toEqual(['echo:hello', Buffer.from([0, 1, 2, 255])])
    socket.close()
    await new Promise((resolve) => socket.once('close', resolve))
    await eventually(() =>
      gateway.logs.some(
        (line) => line.msg === 'upgraded connection closed' && line.requestId === 'upgrade-ws-1',
      ),
    )
  })

  it('when the 101 comes in pieces, then the client gets it whole with the request id, and bytes sent early flow after it', async () => {
    const socket = await client()
    socket.write(`${handshake('/raw/split?case=split', { 'x-request-id': 'upgrade-split-1' })}early-bytes`)
    const answer = await socket.nextAnswer()
    expect(answer.status).toBe(101)
    expect(answer.headers.upgrade).toBe('websocket')
    expect(answer.headers.connection).toBe('Upgrade')
    expect(answer.headers['sec-websocket-accept']).toBe('test')
    expect(answer.headers['x-request-id']).toBe('upgrade-split-1')
    // held until the switch, then passed on: the service echoes them
    await socket.readUntil('echo:early-bytes')
    socket.write('later-bytes')
    await socket.readUntil('echo:later-bytes')
  })
})

describe('an instance whose answer head is broken', () => {
  it.each([
    ['is longer than 16 KiB', 502, 'BAD_GATEWAY', '/raw/oversized?case=broken-1'],
    ['never ends (a header line every 100 ms)', 504, 'GATEWAY_TIMEOUT', '/raw/trickle?case=broken-2'],
    ['is not HTTP', 502, 'BAD_GATEWAY', '/raw/garbage?case=broken-3'],
    ['never comes (the connection is dropped)', 502, 'BAD_GATEWAY', '/raw/hangup?case=broken-4'],
  ])(
    'when the head %s, then the client gets %i %s and both connections close',
    async (_what, status, code, path) => {
      const socket = await client()
      socket.write(handshake(path))
      const answer = await socket.nextAnswer()
      envelope(answer, status, code)
      expect(answer.headers.connection).toBe('close')
      await socket.closed()
      const marker = path.split('?')[1]!
      await eventually(() => connectionWith(marker)?.closed === true)
    },
  )

  it('when an instance keeps answering upgrades with broken heads, then it is ejected like any failing instance', async () => {
    const strict = await gatewayWith({ EJECT_AFTER_FAILURES: '3' })
    for (const attempt of [1, 2, 3]) {
      const socket = await client(strict)
      socket.write(handshake(`/raw/garbage?case=eject-${attempt}`))
      envelope(await socket.nextAnswer(), 502, 'BAD_GATEWAY')
    }
    expect(strict.app.upstreams.get(raw.name)?.status()?.ejected).toHaveLength(1)
    const socket = await client(strict)
    socket.write(handshake('/raw/accept?case=eject-4'))
    envelope(await socket.nextAnswer(), 503, 'SERVICE_UNAVAILABLE')
    expect(raw.everything()).not.toContain('case=eject-4')
  })
})

describe('the edge on an upgrade', () => {
  it("when a client sends its own X-Forwarded-For and hop-by-hop headers, then the service gets the gateway's forwarded headers and none of those", async () => {
    const socket = await client()
    socket.write(
      handshake('/raw/accept?case=forwarded-1', {
        connection: 'Upgrade, x-hop-secret',
        'x-hop-secret': 'must-not-pass',
        'x-forwarded-for': '203.0.113.9',
        'x-real-ip': '203.0.113.9',
        forwarded: 'for=203.0.113.9',
        'proxy-authorization': 'Basic eDp5',
        'x-request-id': 'upgrade-forwarded-1',
      }),
    )
    expect((await socket.nextAnswer()).status).toBe(101)
    const head = headWith('case=forwarded-1') ?? ''
    expect(head).toMatch(/^x-forwarded-for: 127\.0\.0\.1$/im)
    expect(head).toMatch(/^x-real-ip: 127\.0\.0\.1$/im)
    expect(head).toMatch(/^x-request-id: upgrade-forwarded-1$/im)
    expect(head).toMatch(/^connection: Upgrade$/im)
    expect(head).toMatch(/^upgrade: websocket$/im)
    expect(head).toMatch(/^sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==$/im)
    for (const absent of ['203.0.113.9', 'x-hop-secret', 'forwarded:', 'proxy-authorization']) {
      expect(head.toLowerCase()).not.toContain(absent)
    }
  })

  it('when the peer is a trusted proxy, then its X-Forwarded-For chain is extended and names the client', async () => {
    const trusting = await gatewayWith({ TRUSTED_PROXIES: '127.0.0.1' })
    const socket = await client(trusting)
    socket.write(handshake('/raw/accept?case=forwarded-2', { 'x-forwarded-for': '203.0.113.9' }))
    expect((await socket.nextAnswer()).status).toBe(101)
    const head = headWith('case=forwarded-2') ?? ''
    expect(head).toMatch(/^x-forwarded-for: 203\.0\.113\.9, 127\.0\.0\.1$/im)
    expect(head).toMatch(/^x-real-ip: 203\.0\.113\.9$/im)
  })

  it('when an address has used its rate limit, then its next upgrade gets 429 from the gateway and the service never sees it', async () => {
    const limited = await gatewayWith({ RATE_LIMIT_MAX: '2', RATE_LIMIT_SYNC_MS: '0' })
    for (const attempt of [1, 2]) {
      const socket = await client(limited)
      socket.write(handshake(`/raw/accept?case=limit-${attempt}`))
      expect((await socket.nextAnswer()).status).toBe(101)
    }
    const socket = await client(limited)
    socket.write(handshake('/raw/accept?case=limit-3'))
    const answer = await socket.nextAnswer()
    envelope(answer, 429, 'RATE_LIMITED')
    expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0)
    await socket.closed()
    expect(raw.everything()).not.toContain('case=limit-3')
  })
})
