// The default namespace, /admin and a connection's credential over its life, against a listening instance with the
// real socket.io-client: welcome, echo, new_message, user-joined, private, global-alert, auth:expiring / auth:refresh
// / auth:failed, and Socket.IO's long-polling transport through Fastify's route.
import { randomUUID } from 'node:crypto'
import { realtimeMessages } from '@meridian/contracts'
import { accessToken, scaledMs, waitMs } from '@meridian/testkit'
import { io } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, nextEvent, type RealtimeInstance, socketKeeper, startRealtime } from './support/realtime.ts'

/** How long a test waits for an acknowledgement: the tests' scaled wait. */
const ackMs = scaledMs(waitMs)

let realtime: RealtimeInstance
const { keep, closeAll } = socketKeeper()

beforeAll(async () => {
  // auth:expiring 6 s before a token's end: the time a test has to refresh it, on a loaded machine too
  realtime = await startRealtime({ REALTIME_TOKEN_NOTICE_MS: '6000' })
})
afterAll(async () => {
  closeAll()
  await realtime?.close()
})

/** Connects and collects every event from the first one on (welcome is sent as soon as the socket joins). */
async function connectRecording(namespace: Parameters<typeof connect>[1], token = accessToken('user')) {
  const events: [string, unknown][] = []
  const socket = keep(await connect(realtime.url, namespace, { token }))
  socket.onAny((event: string, payload: unknown) => events.push([event, payload]))
  return { socket, events }
}

describe('default namespace', () => {
  it('when a user connects, then welcome names them and carries the socket id', async () => {
    const client = keep(
      io(realtime.url, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: false,
        auth: { token: accessToken('user') },
        extraHeaders: { 'x-forwarded-for': '198.51.100.77' },
      }),
    )
    const welcome = await nextEvent<{ type: string; message: string; socketId: string }>(client, 'welcome')
    expect(welcome).toEqual({ type: 'welcome', message: 'Welcome, user of the tests', socketId: client.id })
  })

  it('when a user joins a room, then the sockets already in it (and only they) hear user-joined', async () => {
    const { socket: member } = await connectRecording('/')
    const { socket: outsider, events: outsiderEvents } = await connectRecording('/')
    expect(await member.timeout(ackMs).emitWithAck('join', { room: 'lobby-1' })).toEqual({
      ok: true,
      room: 'lobby-1',
    })
    const joined = nextEvent(member, 'user-joined')
    const userId = randomUUID()
    const newcomer = keep(await connect(realtime.url, '/', { token: accessToken('user', userId) }))
    expect(await newcomer.timeout(ackMs).emitWithAck('join', { room: 'lobby-1' })).toEqual({
      ok: true,
      room: 'lobby-1',
    })
    expect(await joined).toEqual({ userId, room: 'lobby-1' })
    expect(outsiderEvents.filter(([event]) => event === 'user-joined')).toEqual([])
    void outsider
    // a room name outside [A-Za-z0-9_.:-]{1,64} is refused
    expect(await newcomer.timeout(ackMs).emitWithAck('join', { room: 'no spaces' })).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION_ERROR' },
    })
  })

  it('when a client sends echo, then the echo comes back as an event and as the acknowledgement', async () => {
    const { socket } = await connectRecording('/')
    const echoed = nextEvent(socket, 'echo')
    const ack = await socket.timeout(ackMs).emitWithAck('echo', [1, 'two', { three: 3 }])
    expect(await echoed).toEqual({ type: 'echo', payload: [1, 'two', { three: 3 }] })
    expect(ack).toEqual({ ok: true, echo: { type: 'echo', payload: [1, 'two', { three: 3 }] } })
  })

  it('when a client sends a message, then everyone hears new_message with its author', async () => {
    const { socket: other } = await connectRecording('/')
    const userId = randomUUID()
    const { socket: author } = await connectRecording('/', accessToken('user', userId))
    const heard = nextEvent<Record<string, unknown>>(other, 'new_message')
    const ack = await author.timeout(ackMs).emitWithAck('message', { text: 'hello all' })
    const message = await heard
    expect(message).toMatchObject({ userId, username: 'user of the tests', text: 'hello all' })
    expect(ack).toEqual({ ok: true, message })
  })

  it('when a message is invalid, then error VALIDATION_ERROR Invalid message format with details, and a refused ack', async () => {
    const { socket } = await connectRecording('/')
    const error = nextEvent(socket, 'error')
    const ack = await socket.timeout(ackMs).emitWithAck('message', { text: '' })
    const expected = {
      code: 'VALIDATION_ERROR',
      message: realtimeMessages.invalidMessageFormat,
      details: [{ field: 'text', message: expect.any(String) }],
    }
    expect(await error).toEqual(expected)
    expect(ack).toEqual({ ok: false, error: expected })
  })

  it('when a client sends private to a socket id, then only that socket hears it, with the sender', async () => {
    const { socket: sender } = await connectRecording('/')
    const { socket: target, events: targetEvents } = await connectRecording('/')
    const { events: bystanderEvents } = await connectRecording('/')
    const heard = nextEvent(target, 'private')
    const ack = await sender.timeout(ackMs).emitWithAck('private', { to: target.id, text: 'psst' })
    expect(ack).toEqual({ ok: true })
    expect(await heard).toMatchObject({ text: 'psst', from: sender.id })
    expect(targetEvents.filter(([event]) => event === 'private')).toHaveLength(1)
    expect(bystanderEvents.filter(([event]) => event === 'private')).toHaveLength(0)
  })

  it('when private names no socket, then a refused ack NOT_FOUND', async () => {
    const { socket } = await connectRecording('/')
    const ack = await socket.timeout(ackMs).emitWithAck('private', { to: 'no-such-socket', text: 'psst' })
    expect(ack).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
  })

  it('when the client uses long-polling, then it connects and talks through the Fastify route', async () => {
    const client = keep(
      io(realtime.url, {
        transports: ['polling'],
        forceNew: true,
        reconnection: false,
        auth: { token: accessToken('user') },
        extraHeaders: { 'x-forwarded-for': '198.51.100.78' },
      }),
    )
    await nextEvent(client, 'welcome')
    expect(client.io.engine.transport.name).toBe('polling')
    const ack = await client.timeout(ackMs).emitWithAck('echo', 'over polling')
    expect(ack).toEqual({ ok: true, echo: { type: 'echo', payload: 'over polling' } })
  })
})

describe('/admin', () => {
  it('when an admin lists connections, then they see every socket with its user and namespace', async () => {
    const userId = randomUUID()
    const { socket: user } = await connectRecording('/', accessToken('user', userId))
    const { socket: admin } = await connectRecording('/admin', accessToken('admin'))
    const answer = (await admin.timeout(ackMs).emitWithAck('admin:connections')) as {
      ok: boolean
      connections: { socketId: string; userId: string; namespace: string }[]
    }
    expect(answer.ok).toBe(true)
    expect(answer.connections).toContainEqual(
      expect.objectContaining({ socketId: user.id, userId, namespace: '/', role: 'user' }),
    )
  })

  it('when an admin disconnects a socket, then that socket is disconnected by the server', async () => {
    const { socket: user } = await connectRecording('/')
    const { socket: admin } = await connectRecording('/admin', accessToken('admin'))
    const gone = nextEvent(user, 'disconnect')
    const answer = await admin.timeout(ackMs).emitWithAck('admin:disconnect', { socketId: user.id })
    expect(answer).toEqual({ ok: true, disconnected: 1 })
    expect(await gone).toBe('io server disconnect')
  })

  it('when an admin sends a global alert, then every socket of the default namespace hears global-alert', async () => {
    const { socket: user } = await connectRecording('/')
    const { socket: admin } = await connectRecording('/admin', accessToken('admin'))
    const alert = nextEvent(user, 'global-alert')
    expect(
      await admin.timeout(ackMs).emitWithAck('admin:global-alert', { message: 'maintenance at noon' }),
    ).toEqual({
      ok: true,
    })
    expect(await alert).toEqual({ message: 'maintenance at noon' })
  })
})

describe('credential over the connection', () => {
  it('when the token nears its expiry, then auth:expiring; a refresh of the same user is accepted and the socket lives on', async () => {
    const userId = randomUUID()
    // its notice comes 2 s in: then there are 6 s to refresh it
    const { socket } = await connectRecording('/', accessToken('user', userId, { expiresInSeconds: 8 }))
    const expiring = await nextEvent<{ expiresAt: number }>(socket, 'auth:expiring')
    expect(expiring.expiresAt).toBeGreaterThan(Date.now())
    const fresh = accessToken('user', userId)
    const ack = (await socket.timeout(ackMs).emitWithAck('auth:refresh', { token: fresh })) as {
      ok: boolean
      expiresAt: number
    }
    expect(ack.ok).toBe(true)
    expect(ack.expiresAt).toBeGreaterThan(expiring.expiresAt)
    // past the first token's expiry, the connection is still up (the server's timers are of this process: one for the
    // old expiry would have fired before this one)
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiring.expiresAt - Date.now()) + 300))
    expect(socket.connected).toBe(true)
  })

  it("when the refresh carries another user's or a bad token, then auth:failed and the server disconnects", async () => {
    for (const token of [accessToken('user'), 'garbage']) {
      const { socket } = await connectRecording(
        '/',
        accessToken('user', randomUUID(), { expiresInSeconds: 60 }),
      )
      const failed = nextEvent(socket, 'auth:failed')
      const gone = nextEvent(socket, 'disconnect')
      const ack = await socket.timeout(ackMs).emitWithAck('auth:refresh', { token })
      expect(ack).toMatchObject({ ok: false, error: { message: realtimeMessages.invalidToken } })
      expect(await failed).toEqual({ message: realtimeMessages.invalidToken })
      expect(await gone).toBe('io server disconnect')
    }
  })

  it('when the token expires without a refresh, then auth:failed and the server disconnects', async () => {
    // 4 to 5 s left (exp is in whole seconds): the connection is made well before it ends, on a loaded machine too
    const { socket } = await connectRecording('/', accessToken('user', randomUUID(), { expiresInSeconds: 5 }))
    const failed = nextEvent(socket, 'auth:failed')
    const gone = nextEvent(socket, 'disconnect')
    expect(await failed).toEqual({ message: realtimeMessages.invalidToken })
    expect(await gone).toBe('io server disconnect')
  })
})
