// auth:expiring → refreshToken() → auth:refresh (spec: Authentication 11), against a real Socket.IO server.
import type { Socket as ServerSocket } from 'socket.io'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type RealtimeClient, RealtimeRequestError } from '../src/index.ts'
import {
  clientOf,
  nextConnection,
  nextEvent,
  type RealtimeServer,
  startRealtimeServer,
  waitMs,
} from './realtime-server.ts'

const expiresAt = 1_900_000_000_000

/** Resolves with the token of the next auth:refresh the server socket hears, answering with `answer`. */
function nextRefresh(socket: ServerSocket, answer: object = { ok: true, expiresAt }): Promise<string> {
  return new Promise((resolve) =>
    socket.once('auth:refresh', ({ token }: { token: string }, ack: (answer: object) => void) => {
      ack(answer)
      resolve(token)
    }),
  )
}

describe('realtime client: token refresh', () => {
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

  it('when the server sends auth:expiring, then refreshToken() is called and auth:refresh carries the new token', async () => {
    let refreshes = 0
    client = clientOf(server, { token: () => 'old', refreshToken: async () => `new-${++refreshes}` })
    const connected = nextConnection(server)
    client.namespace('/')
    const serverSocket = await connected
    const refreshed = nextRefresh(serverSocket)
    serverSocket.emit('auth:expiring', { expiresAt: Date.now() + 60_000 })
    expect(await refreshed).toBe('new-1')
    expect(refreshes).toBe(1)
  })

  it('when two namespaces hear auth:expiring together, then one refreshToken() call answers both', async () => {
    server.io.of('/chat')
    let refreshes = 0
    client = clientOf(server, { token: () => 'old', refreshToken: async () => `new-${++refreshes}` })
    const main = nextConnection(server, '/')
    const chat = nextConnection(server, '/chat')
    client.namespace('/')
    client.namespace('/chat')
    const sockets = await Promise.all([main, chat])
    const refreshed = sockets.map((socket) => nextRefresh(socket))
    for (const socket of sockets) socket.emit('auth:expiring', { expiresAt: Date.now() + 60_000 })
    expect(await Promise.all(refreshed)).toEqual(['new-1', 'new-1'])
    expect(refreshes).toBe(1)
  })

  it('when refreshToken() throws, then nothing is sent and error reports the failure', async () => {
    client = clientOf(server, {
      token: () => 'old',
      refreshToken: () => Promise.reject(new Error('refresh token revoked')),
    })
    const connected = nextConnection(server)
    client.namespace('/')
    const serverSocket = await connected
    let refreshesHeard = 0
    serverSocket.on('auth:refresh', () => refreshesHeard++)
    serverSocket.on('echo', (_payload: unknown, ack: (answer: object) => void) => ack({ ok: true }))
    const failed = nextEvent(client, 'error')
    serverSocket.emit('auth:expiring', { expiresAt: Date.now() + 60_000 })
    const [namespace, error] = await failed
    expect(namespace).toBe('/')
    expect(error.message).toBe('refresh token revoked')
    // A round trip later the server has still heard no auth:refresh.
    await client.namespace('/').timeout(waitMs).emitWithAck('echo', 'ping')
    expect(refreshesHeard).toBe(0)
  })

  it('when the server refuses the new token, then error carries its refusal and auth:failed is reported', async () => {
    client = clientOf(server, { token: () => 'old', refreshToken: async () => 'bad' })
    const connected = nextConnection(server)
    client.namespace('/')
    const serverSocket = await connected
    serverSocket.once('auth:refresh', (_refresh: unknown, ack: (answer: object) => void) => {
      ack({ ok: false, error: { code: 'UNAUTHORIZED', message: 'Invalid or expired token' } })
      serverSocket.emit('auth:failed', { message: 'Invalid or expired token' })
      serverSocket.disconnect(true)
    })
    const failed = nextEvent(client, 'error')
    const authFailed = nextEvent(client, 'auth:failed')
    const disconnected = nextEvent(client, 'disconnect')
    serverSocket.emit('auth:expiring', { expiresAt: Date.now() + 60_000 })

    const [, error] = await failed
    expect(error).toBeInstanceOf(RealtimeRequestError)
    expect(error).toMatchObject({
      event: 'auth:refresh',
      code: 'UNAUTHORIZED',
      message: 'Invalid or expired token',
    })
    expect(await authFailed).toEqual(['/', { message: 'Invalid or expired token' }])
    expect((await disconnected)[1]).toBe('io server disconnect')
  })

  it('when no refreshToken is given, then auth:expiring is left unanswered', async () => {
    client = clientOf(server, { token: () => 'old' })
    const connected = nextConnection(server)
    client.namespace('/')
    const serverSocket = await connected
    let refreshesHeard = 0
    serverSocket.on('auth:refresh', () => refreshesHeard++)
    serverSocket.on('echo', (_payload: unknown, ack: (answer: object) => void) => ack({ ok: true }))
    serverSocket.emit('auth:expiring', { expiresAt: Date.now() + 60_000 })
    await client.namespace('/').timeout(waitMs).emitWithAck('echo', 'ping')
    expect(refreshesHeard).toBe(0)
  })
})
