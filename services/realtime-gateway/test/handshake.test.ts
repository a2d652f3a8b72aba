// The handshake of the realtime channel against a listening instance, with the real socket.io-client: every failure
// message of the spec, the origin allow-list, the address's attempts and concurrent connections, cookie sessions.
import { randomUUID } from 'node:crypto'
import { authNames, realtimeMessages } from '@meridian/contracts'
import { accessToken, eventually } from '@meridian/testkit'
import { Manager } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  allowedOrigin,
  connect,
  nextEvent,
  type RealtimeInstance,
  refusalOf,
  socketKeeper,
  startRealtime,
} from './support/realtime.ts'

let realtime: RealtimeInstance
const { keep, closeAll } = socketKeeper()

beforeAll(async () => {
  realtime = await startRealtime()
})
afterAll(async () => {
  closeAll()
  await realtime?.close()
})

describe('handshake', () => {
  it('when a user connects with a bearer token, then the socket is connected', async () => {
    const socket = keep(await connect(realtime.url, '/'))
    expect(socket.connected).toBe(true)
  })

  it('when no credential is sent, then Authentication required', async () => {
    expect(await refusalOf(connect(realtime.url, '/', { token: null }))).toEqual({
      message: realtimeMessages.authenticationRequired,
      data: { code: 'UNAUTHORIZED' },
    })
  })

  it('when the token is bad, then Invalid or expired token (with or without Bearer)', async () => {
    expect((await refusalOf(connect(realtime.url, '/', { token: 'not-a-jwt' }))).message).toBe(
      realtimeMessages.invalidToken,
    )
    expect((await refusalOf(connect(realtime.url, '/', { token: 'Bearer not-a-jwt' }))).message).toBe(
      realtimeMessages.invalidToken,
    )
  })

  it('when the token has a Bearer prefix, then it is stripped', async () => {
    keep(await connect(realtime.url, '/', { token: `Bearer ${accessToken('user')}` }))
  })

  it('when cookies carry no session, then No session; an unknown session, Invalid session', async () => {
    const headers = { origin: allowedOrigin, cookie: 'theme=dark' }
    expect((await refusalOf(connect(realtime.url, '/', { token: null, headers }))).message).toBe(
      realtimeMessages.noSession,
    )
    const unknown = { origin: allowedOrigin, cookie: `${authNames.sessionCookie}=${randomUUID()}` }
    expect((await refusalOf(connect(realtime.url, '/', { token: null, headers: unknown }))).message).toBe(
      realtimeMessages.invalidSession,
    )
  })

  it('when a valid session cookie comes with an allowed Origin, then it connects; without Origin it is refused', async () => {
    const sessionId = randomUUID()
    const userId = randomUUID()
    await realtime.redis.set(
      `${authNames.sessionKeyPrefix}${sessionId}`,
      JSON.stringify({ userId, role: 'user', createdAt: new Date().toISOString() }),
      'EX',
      60,
    )
    const cookie = `${authNames.sessionCookie}=${sessionId}`
    const socket = keep(
      await connect(realtime.url, '/', { token: null, headers: { origin: allowedOrigin, cookie } }),
    )
    expect(socket.connected).toBe(true)
    expect((await refusalOf(connect(realtime.url, '/', { token: null, headers: { cookie } }))).message).toBe(
      realtimeMessages.authenticationRequired,
    )
  })

  it('when the Origin is not allowed, then Origin not allowed', async () => {
    const refusal = await refusalOf(connect(realtime.url, '/', { headers: { origin: 'http://evil.test' } }))
    expect(refusal).toEqual({ message: realtimeMessages.originNotAllowed, data: { code: 'FORBIDDEN' } })
  })

  it('when a non-admin joins /admin, then Unauthorized; an admin gets in', async () => {
    expect((await refusalOf(connect(realtime.url, '/admin'))).message).toBe(realtimeMessages.unauthorized)
    keep(await connect(realtime.url, '/admin', { token: accessToken('admin') }))
  })

  it('when one address makes an 11th attempt within the window, then Too many connection attempts', async () => {
    const headers = { 'x-forwarded-for': '192.0.2.11' }
    for (let attempt = 1; attempt <= 10; attempt++) {
      const socket = await connect(realtime.url, '/', { headers })
      socket.close()
    }
    expect(await refusalOf(connect(realtime.url, '/', { headers }))).toEqual({
      message: realtimeMessages.tooManyAttempts,
      data: { code: 'RATE_LIMITED', limit: 'attempts' },
    })
  })

  it('when one address holds 5 connections, then the 6th is refused, and a slot frees when one closes', async () => {
    const headers = { 'x-forwarded-for': '192.0.2.12' }
    const held = []
    for (let n = 1; n <= 5; n++) held.push(keep(await connect(realtime.url, '/', { headers })))
    expect(await refusalOf(connect(realtime.url, '/', { headers }))).toEqual({
      message: realtimeMessages.tooManyAttempts,
      data: { code: 'RATE_LIMITED', limit: 'concurrent' },
    })
    held[0]?.close()
    // the instance gives the slot back in Redis once it sees the connection close
    const slots = `${realtime.config.REALTIME_REDIS_PREFIX}connections:192.0.2.12`
    await eventually(
      'the closed connection’s slot is free',
      async () => (await realtime.redis.zcard(slots)) === 4,
    )
    keep(await connect(realtime.url, '/', { headers }))
  })

  it('when one connection multiplexes several namespaces joined at once, then it holds one slot of its address', async () => {
    const headers = { 'x-forwarded-for': '192.0.2.13' }
    for (let n = 1; n <= 4; n++) keep(await connect(realtime.url, '/', { headers }))
    // the fifth connection joins three namespaces at the same moment
    const manager = new Manager(realtime.url, {
      transports: ['websocket'],
      reconnection: false,
      extraHeaders: headers,
    })
    const auth = { token: accessToken('user') }
    const sockets = ['/', '/chat', '/collab'].map((namespace) => keep(manager.socket(namespace, { auth })))
    await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve, reject) => {
            socket.once('connect', () => resolve())
            socket.once('connect_error', reject)
          }),
      ),
    )
    // a sixth connection is over the limit: the fifth counted once
    expect(await refusalOf(connect(realtime.url, '/', { headers }))).toEqual({
      message: realtimeMessages.tooManyAttempts,
      data: { code: 'RATE_LIMITED', limit: 'concurrent' },
    })
  })

  it('when a browser of an allowed origin preflights long-polling, then CORS allows that origin exactly, with credentials, for GET and POST; another origin is not allowed', async () => {
    const preflight = (origin: string) =>
      fetch(`${realtime.url}/socket.io/?EIO=4&transport=polling`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      })
    const allowed = await preflight(allowedOrigin)
    expect(allowed.status).toBe(204)
    expect(allowed.headers.get('access-control-allow-origin')).toBe(allowedOrigin)
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true')
    expect(allowed.headers.get('access-control-allow-methods')).toBe('GET,POST')
    const refused = await preflight('http://evil.test')
    expect(refused.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('when a client connects, then welcome and echo work', async () => {
    const socket = keep(await connect(realtime.url, '/'))
    const echoed = nextEvent(socket, 'echo')
    socket.emit('echo', { hello: 'world' })
    expect(await echoed).toEqual({ type: 'echo', payload: { hello: 'world' } })
  })
})
