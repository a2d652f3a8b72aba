// The shared connection against a real Socket.IO server: handshake tokens, multiplexing, and connection events.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { RealtimeClient } from '../src/index.ts'
import {
  clientOf,
  nextConnection,
  nextEvent,
  type RealtimeServer,
  startRealtimeServer,
} from './realtime-server.ts'

describe('realtime client: connection', () => {
  let server: RealtimeServer
  let client: RealtimeClient | undefined

  beforeEach(async () => {
    server = await startRealtimeServer()
  })
  afterEach(async () => {
    client?.close()
    client = undefined
    await server.close()
  })

  it('when it connects and later reconnects, then each handshake carries a fresh token from token()', async () => {
    let issued = 0
    const token = () => Promise.resolve(`token-${++issued}`)
    const first = nextConnection(server)
    client = clientOf(server, { token })
    client.namespace('/')
    const firstSocket = await first
    expect(firstSocket.handshake.auth.token).toBe('token-1')

    const second = nextConnection(server)
    firstSocket.conn.close()
    expect((await second).handshake.auth.token).toBe('token-2')
    expect(issued).toBe(2)
  })

  it('when several namespaces are opened, then they share one engine connection', async () => {
    server.io.of('/chat')
    const main = nextConnection(server, '/')
    const chat = nextConnection(server, '/chat')
    client = clientOf(server, { token: () => 't' })
    client.namespace('/')
    client.namespace('/chat')
    const [mainSocket, chatSocket] = await Promise.all([main, chat])
    expect(chatSocket.conn).toBe(mainSocket.conn)
    expect(server.io.engine.clientsCount).toBe(1)
    expect(client.namespace('/chat')).toBe(client.namespace('/chat'))
  })

  it("when the server's middleware refuses the handshake, then connect_error carries its message", async () => {
    server.io.use((_socket, next) => next(new Error('Authentication required')))
    client = clientOf(server)
    const refused = nextEvent(client, 'connect_error')
    client.namespace('/')
    const [namespace, error] = await refused
    expect(namespace).toBe('/')
    expect(error.message).toBe('Authentication required')
  })

  it('when token() fails, then error reports it and the handshake goes without a token', async () => {
    server.io.use((socket, next) =>
      next(socket.handshake.auth.token ? undefined : new Error('Authentication required')),
    )
    client = clientOf(server, { token: () => Promise.reject(new Error('store unavailable')) })
    const failed = nextEvent(client, 'error')
    const refused = nextEvent(client, 'connect_error')
    client.namespace('/')
    expect((await failed)[1].message).toBe('store unavailable')
    expect((await refused)[1].message).toBe('Authentication required')
  })

  it('when the server drops the transport, then reconnect_attempt and reconnect are reported and the socket is back', async () => {
    client = clientOf(server, { token: () => 't' })
    const connected = nextConnection(server)
    client.namespace('/')
    const serverSocket = await connected

    const attempt = nextEvent(client, 'reconnect_attempt')
    const reconnected = nextEvent(client, 'reconnect')
    const disconnected = nextEvent(client, 'disconnect')
    serverSocket.conn.close()
    expect((await disconnected).slice(0, 2)).toEqual(['/', 'transport close'])
    expect(await attempt).toEqual([1])
    expect(await reconnected).toEqual([1])
    await nextEvent(client, 'connect')
    expect(client.namespace('/').connected).toBe(true)
  })

  it('when a namespace reconnects without connection-state recovery, then resync is reported for it', async () => {
    server.io.of('/notifications')
    client = clientOf(server, { token: () => 't' })
    const connected = nextConnection(server, '/notifications')
    const firstConnect = nextEvent(client, 'connect')
    client.namespace('/notifications')
    const serverSocket = await connected
    expect(await firstConnect).toEqual(['/notifications', { recovered: false }])

    const resync = nextEvent(client, 'resync')
    const reconnect = nextEvent(client, 'connect')
    serverSocket.conn.close()
    expect(await reconnect).toEqual(['/notifications', { recovered: false }])
    expect(await resync).toEqual(['/notifications'])
  })

  it('when the server closes before the attempts run out, then reconnect_failed is reported', async () => {
    client = clientOf(server, { token: () => 't' })
    const connected = nextConnection(server)
    client.namespace('/')
    await connected
    const failed = nextEvent(client, 'reconnect_failed')
    await server.close()
    expect(await failed).toEqual([])
  })

  it('when the server announces a restart, then server:restart is reported with its message', async () => {
    client = clientOf(server, { token: () => 't' })
    const connected = nextConnection(server)
    client.namespace('/')
    const serverSocket = await connected
    const restart = nextEvent(client, 'server:restart')
    serverSocket.emit('server:restart', { message: 'Server restarting; reconnect' })
    expect(await restart).toEqual(['/', { message: 'Server restarting; reconnect' }])
  })

  it('when a cookie is given in Node, then the handshake carries it as the Cookie header', async () => {
    const connected = nextConnection(server)
    client = clientOf(server, { cookie: 'sid=abc' })
    client.namespace('/')
    const serverSocket = await connected
    expect(serverSocket.handshake.headers.cookie).toBe('sid=abc')
    expect(serverSocket.handshake.auth).toEqual({})
  })

  it('when closed, then every namespace disconnects and namespace() refuses', async () => {
    client = clientOf(server, { token: () => 't' })
    const connected = nextConnection(server)
    const socket = client.namespace('/')
    const serverSocket = await connected
    const gone = new Promise<string>((resolve) => serverSocket.once('disconnect', resolve))
    client.close()
    // The DISCONNECT packet and the engine's close race; either way the server sees the socket go.
    expect(['client namespace disconnect', 'transport close']).toContain(await gone)
    expect(socket.active).toBe(false)
    expect(() => client?.namespace('/')).toThrow('The realtime client is closed')
  })
})

describe('realtime client: connection-state recovery', () => {
  let server: RealtimeServer
  let client: RealtimeClient | undefined

  beforeEach(async () => {
    server = await startRealtimeServer({ connectionStateRecovery: { maxDisconnectionDuration: 10_000 } })
  })
  afterEach(async () => {
    client?.close()
    client = undefined
    await server.close()
  })

  it('when the server recovers the session after a dropped transport, then there is no resync', async () => {
    client = clientOf(server, { token: () => 't' })
    const connected = nextConnection(server)
    const socket = client.namespace('/')
    const serverSocket = await connected
    // Recovery resumes from the offset of the last broadcast the client heard, so it must have heard one.
    const heard = new Promise((resolve) => socket.once('global-alert', resolve))
    server.io.emit('global-alert', { message: 'hello' })
    await heard
    let resyncs = 0
    client.on('resync', () => resyncs++)

    const reconnect = nextEvent(client, 'connect')
    serverSocket.conn.close()
    expect(await reconnect).toEqual(['/', { recovered: true }])
    expect(resyncs).toBe(0)
  })
})
