// /ws, the raw RFC 6455 endpoint, with the `ws` client against a listening instance: the handshake's
// Sec-WebSocket-Accept, welcome and echo, ping/pong, the termination of a socket that stops answering, the
// admission (credential, origin 4001, the address's attempts and concurrent connections).
import { createHash, randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { originNotAllowedCloseCode, realtimeMessages } from '@meridian/contracts'
import { accessToken, scaledMs, waitMs } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import {
  allowedOrigin,
  connect,
  type RealtimeInstance,
  someAddress,
  startRealtime,
} from './support/realtime.ts'

let realtime: RealtimeInstance
const open: WebSocket[] = []
const afterAllClose: (() => void)[] = []

beforeAll(async () => {
  realtime = await startRealtime({ RAW_WS_PING_INTERVAL_MS: '200' })
})
afterAll(async () => {
  for (const close of afterAllClose) close()
  for (const socket of open) {
    // a socket refused before its upgrade reports the termination as an error: expected here
    socket.on('error', () => {})
    socket.terminate()
  }
  await realtime?.close()
})

const wsUrl = () => `${realtime.url.replace('http', 'ws')}/ws`

/** A client of /ws; resolves once open (with the first message, welcome) or rejects with the HTTP refusal. */
function openSocket(headers: Record<string, string> = {}, options: WebSocket.ClientOptions = {}) {
  const socket = new WebSocket(wsUrl(), {
    headers: { authorization: `Bearer ${accessToken('user')}`, 'x-forwarded-for': someAddress(), ...headers },
    ...options,
  })
  open.push(socket)
  const messages: unknown[] = []
  socket.on('message', (data) => messages.push(JSON.parse(String(data))))
  return new Promise<{ socket: WebSocket; messages: unknown[] }>((resolve, reject) => {
    socket.once('open', () => resolve({ socket, messages }))
    socket.once('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => {
        body += chunk
      })
      response.on('end', () =>
        reject(
          Object.assign(new Error(`HTTP ${response.statusCode}`), { statusCode: response.statusCode, body }),
        ),
      )
    })
    socket.once('error', reject)
  })
}

const eventually = async (check: () => boolean, timeoutMs = scaledMs(waitMs)) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('/ws', () => {
  it('when the upgrade is made by hand, then 101 with Sec-WebSocket-Accept = base64(SHA-1(key + RFC 6455 GUID))', async () => {
    const key = randomBytes(16).toString('base64')
    const answer = await new Promise<{ status: number; accept: string | undefined }>((resolve, reject) => {
      const request = httpRequest(`${realtime.url}/ws`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-key': key,
          'sec-websocket-version': '13',
          authorization: `Bearer ${accessToken('user')}`,
          'x-forwarded-for': someAddress(),
        },
      })
      request.on('upgrade', (response, socket) => {
        socket.destroy()
        resolve({ status: response.statusCode ?? 0, accept: response.headers['sec-websocket-accept'] })
      })
      request.on('response', (response) => resolve({ status: response.statusCode ?? 0, accept: undefined }))
      request.on('error', reject)
      request.end()
    })
    const expected = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64')
    expect(answer).toEqual({ status: 101, accept: expected })
  })

  it('when an upgrade asks for a path without a WebSocket route, then Fastify answers it with its 404 envelope (the dispatcher gives only /socket.io/ to the engine)', async () => {
    const socket = new WebSocket(`${realtime.url.replace('http', 'ws')}/nowhere`, {
      headers: { authorization: `Bearer ${accessToken('user')}`, 'x-forwarded-for': someAddress() },
    })
    open.push(socket)
    const [status, body] = await new Promise<[number, string]>((resolve) =>
      socket.once('unexpected-response', (_request, response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => {
          text += chunk
        })
        response.on('end', () => resolve([response.statusCode ?? 0, text]))
      }),
    )
    expect(status).toBe(404)
    expect(JSON.parse(body).error).toMatchObject({
      code: 'NOT_FOUND',
      message: 'Route GET /nowhere not found',
    })
  })

  it('when the client offers permessage-deflate, then it is agreed without context takeover (so only messages above 1024 bytes are compressed)', async () => {
    const extensions = await new Promise<string | undefined>((resolve, reject) => {
      const request = httpRequest(`${realtime.url}/ws`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-key': randomBytes(16).toString('base64'),
          'sec-websocket-version': '13',
          'sec-websocket-extensions': 'permessage-deflate; client_max_window_bits',
          authorization: `Bearer ${accessToken('user')}`,
          'x-forwarded-for': someAddress(),
        },
      })
      request.on('upgrade', (response, socket) => {
        socket.destroy()
        resolve(response.headers['sec-websocket-extensions'])
      })
      request.on('error', reject)
      request.end()
    })
    expect(extensions).toBe('permessage-deflate; server_no_context_takeover; client_no_context_takeover')
  })

  it('when connected, then welcome, and every message is echoed (JSON as JSON, text as text)', async () => {
    const { socket, messages } = await openSocket()
    await eventually(() => messages.length === 1)
    expect(messages[0]).toEqual({ type: 'welcome', message: 'Welcome, user of the tests' })
    socket.send(JSON.stringify({ hello: 'world' }))
    socket.send('plain text')
    await eventually(() => messages.length === 3)
    expect(messages.slice(1)).toEqual([
      { type: 'echo', payload: { hello: 'world' } },
      { type: 'echo', payload: 'plain text' },
    ])
  })

  it('when the server pings, then the client pongs and stays connected; a client that stops answering is terminated', async () => {
    const { socket } = await openSocket()
    let pings = 0
    socket.on('ping', () => {
      pings += 1
    })
    await eventually(() => pings >= 3)
    expect(socket.readyState).toBe(WebSocket.OPEN)

    // autoPong off: the client never answers, so the second ping finds the first unanswered
    const { socket: silent } = await openSocket({}, { autoPong: false })
    const closed = new Promise<number>((resolve) => silent.once('close', (code) => resolve(code)))
    expect(await closed).toBe(1006)
  })

  it('when a client pings, then the pong carries the same data', async () => {
    const { socket } = await openSocket()
    const pong = new Promise<string>((resolve) => socket.once('pong', (data) => resolve(String(data))))
    socket.ping('are you there')
    expect(await pong).toBe('are you there')
  })

  it('when there is no credential, then 401 Authentication required before the upgrade', async () => {
    const failure = await openSocket({ authorization: '' }).catch(
      (error: { statusCode: number; body: string }) => error,
    )
    expect(failure).toMatchObject({ statusCode: 401 })
  })

  it('when the token is bad, then 401 Invalid or expired token', async () => {
    const failure = (await openSocket({ authorization: 'Bearer nope' }).catch((error) => error)) as {
      statusCode: number
      body: string
    }
    expect(failure.statusCode).toBe(401)
    expect(JSON.parse(failure.body).error.message).toBe(realtimeMessages.invalidToken)
  })

  it('when a token is in the URL instead of a header, then it is not a credential', async () => {
    const socket = new WebSocket(`${wsUrl()}?token=${accessToken('user')}`, {
      headers: { 'x-forwarded-for': someAddress() },
    })
    open.push(socket)
    const status = await new Promise<number>((resolve) =>
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0)),
    )
    expect(status).toBe(401)
  })

  it('when the Origin is not allowed, then the connection is closed with 4001 Origin not allowed', async () => {
    const socket = new WebSocket(wsUrl(), {
      headers: { origin: 'http://evil.test', 'x-forwarded-for': someAddress() },
    })
    open.push(socket)
    const [code, reason] = await new Promise<[number, string]>((resolve) =>
      socket.once('close', (closeCode, closeReason) => resolve([closeCode, String(closeReason)])),
    )
    expect([code, reason]).toEqual([originNotAllowedCloseCode, realtimeMessages.originNotAllowed])
  })

  it('when an allowed Origin comes with the token, then it connects', async () => {
    const { socket } = await openSocket({ origin: allowedOrigin })
    expect(socket.readyState).toBe(WebSocket.OPEN)
  })

  it('when one address holds 5 connections, then the 6th upgrade is refused with 429, Socket.IO and /ws counted together', async () => {
    const address = '192.0.2.51'
    for (let n = 0; n < 3; n++) {
      const socket = await connect(realtime.url, '/', { headers: { 'x-forwarded-for': address } })
      afterAllClose.push(() => socket.close())
    }
    for (let n = 0; n < 2; n++) await openSocket({ 'x-forwarded-for': address })
    const failure = (await openSocket({ 'x-forwarded-for': address }).catch((error) => error)) as {
      statusCode: number
      body: string
    }
    expect(failure.statusCode).toBe(429)
    expect(JSON.parse(failure.body).error).toMatchObject({
      code: 'RATE_LIMITED',
      message: realtimeMessages.tooManyAttempts,
    })
  })

  it('when /metrics is read, then its JSON counts the channel connections and messages', async () => {
    const answer = await realtime.app.inject({ method: 'GET', url: '/metrics' })
    const counters = answer.json()
    expect(counters.totalConnections).toBeGreaterThan(0)
    expect(counters.activeConnections).toBeGreaterThan(0)
    expect(counters.messagesReceived).toBeGreaterThan(0)
    expect(counters.messagesSent).toBeGreaterThan(counters.messagesReceived - 1)
  })
})
