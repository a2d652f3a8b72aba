// Two instances of the realtime channel sharing it (one Redis prefix, one database), as production runs them behind a
// balancer, driven by real socket.io clients: an address's limits counted across both, events and admin actions that
// cross from one instance to the other, a graceful shutdown (server:restart, then the disconnection, no new
// connections meanwhile), connection-state recovery of a client that comes back on the other instance, and the
// distinct users of the whole channel.
import { randomInt, randomUUID } from 'node:crypto'
import { realtimeMessages } from '@meridian/contracts'
import { createRealtimeClient, type RealtimeClient } from '@meridian/realtime-client'
import { accessToken, eventually, scaledMs, waitMs } from '@meridian/testkit'
import { io, type Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  connect,
  heard,
  nextEvent,
  type RealtimeInstance,
  refusalOf,
  send,
  socketKeeper,
  someAddress,
  startRealtime,
} from './support/realtime.ts'

/** How long a test waits for an acknowledgement: the tests' scaled wait. */
const ackMs = scaledMs(waitMs)

const { keep, closeAll } = socketKeeper()
const clients: RealtimeClient[] = []

afterAll(() => {
  closeAll()
  for (const client of clients) client.close()
})

/** An address of the documentation range of its own (the limits count per address, across instances). */
const ownAddress = () => `192.0.2.${randomInt(1, 255)}, 198.18.${randomInt(0, 255)}.${randomInt(1, 255)}`

describe('two instances of one channel', () => {
  let a: RealtimeInstance
  let b: RealtimeInstance

  beforeAll(async () => {
    a = await startRealtime()
    b = await startRealtime({}, { sharing: a })
  })
  afterAll(async () => {
    closeAll()
    await b?.close()
    await a?.close()
  })

  describe('limits across instances', () => {
    it('when one address holds 3 connections on A and 2 on B, then a 6th is refused on either (concurrent)', async () => {
      const headers = { 'x-forwarded-for': ownAddress() }
      for (let n = 1; n <= 3; n++) keep(await connect(a.url, '/', { headers }))
      for (let n = 1; n <= 2; n++) keep(await connect(b.url, '/', { headers }))
      const refused = {
        message: realtimeMessages.tooManyAttempts,
        data: { code: 'RATE_LIMITED', limit: 'concurrent' },
      }
      expect(await refusalOf(connect(a.url, '/', { headers }))).toEqual(refused)
      expect(await refusalOf(connect(b.url, '/', { headers }))).toEqual(refused)
    })

    it('when one address made 6 attempts on A and 4 on B, then the 11th, on A, is refused (attempts)', async () => {
      const headers = { 'x-forwarded-for': ownAddress() }
      for (const [instance, times] of [
        [a, 6],
        [b, 4],
      ] as const) {
        for (let n = 1; n <= times; n++) {
          const socket = await connect(instance.url, '/', { headers })
          socket.close()
        }
      }
      expect(await refusalOf(connect(a.url, '/', { headers }))).toEqual({
        message: realtimeMessages.tooManyAttempts,
        data: { code: 'RATE_LIMITED', limit: 'attempts' },
      })
    })
  })

  describe('events across instances', () => {
    it('when a socket on A sends private to a socket id on B, then it arrives there', async () => {
      const senderId = randomUUID()
      const sender = keep(await connect(a.url, '/', { token: accessToken('user', senderId) }))
      const receiver = keep(await connect(b.url, '/'))
      const arrived = nextEvent(receiver, 'private')
      expect(await send(sender, 'private', { to: receiver.id, text: 'across' })).toEqual({ ok: true })
      expect(await arrived).toEqual({ text: 'across', from: sender.id, userId: senderId })
    })

    it('when an admin on A sends admin:global-alert, then default-namespace sockets on A and B hear global-alert', async () => {
      const onA = keep(await connect(a.url, '/'))
      const onB = keep(await connect(b.url, '/'))
      const admin = keep(await connect(a.url, '/admin', { token: accessToken('admin') }))
      const message = `maintenance at noon ${randomUUID()}`
      const heardOnA = nextEvent(onA, 'global-alert')
      const heardOnB = nextEvent(onB, 'global-alert')
      expect(await send(admin, 'admin:global-alert', { message })).toEqual({ ok: true })
      expect(await heardOnA).toEqual({ message })
      expect(await heardOnB).toEqual({ message })
    })

    it("when an admin on A asks admin:connections, then B's sockets are listed with their user and namespace", async () => {
      const userId = randomUUID()
      const onB = keep(await connect(b.url, '/notifications', { token: accessToken('user', userId) }))
      const admin = keep(await connect(a.url, '/admin', { token: accessToken('admin') }))
      const answer = await send(admin, 'admin:connections')
      expect(answer.ok).toBe(true)
      const connections = answer.connections as { socketId: string }[]
      expect(connections.filter((connection) => connection.socketId === onB.id)).toEqual([
        {
          socketId: onB.id,
          userId,
          username: 'user of the tests',
          role: 'user',
          address: expect.any(String),
          namespace: '/notifications',
          connectedAt: expect.any(String),
        },
      ])
      // the admin's own socket, on A, too
      expect(connections.some((connection) => connection.socketId === admin.id)).toBe(true)
    })

    it('when an admin on A disconnects a socket on B, then that socket is disconnected by the server', async () => {
      const onB = keep(await connect(b.url, '/'))
      const bystander = keep(await connect(b.url, '/'))
      const admin = keep(await connect(a.url, '/admin', { token: accessToken('admin') }))
      const disconnected = nextEvent<string>(onB, 'disconnect')
      expect(await send(admin, 'admin:disconnect', { socketId: onB.id })).toEqual({
        ok: true,
        disconnected: 1,
      })
      expect(await disconnected).toBe('io server disconnect')
      expect(onB.connected).toBe(false)
      expect(bystander.connected).toBe(true)
    })
  })

  describe('connection-state recovery', () => {
    it('when a client on A loses its transport and comes back on B, then it is recovered and gets the broadcast it missed', async () => {
      const userId = randomUUID()
      const client = keep(
        io(a.url, {
          transports: ['websocket'],
          forceNew: true,
          reconnection: true,
          reconnectionDelay: 700,
          reconnectionDelayMax: 700,
          randomizationFactor: 0,
          auth: { token: accessToken('user', userId) },
          extraHeaders: { 'x-forwarded-for': someAddress() },
        }),
      )
      await nextEvent(client, 'connect')
      expect(client.recovered).toBe(false)
      const admin = keep(await connect(b.url, '/admin', { token: accessToken('admin') }))
      const alerts = heard<{ message: string }>(client, 'global-alert')

      // a broadcast received first: the client then has an offset in the channel's stream to resume from
      expect(await send(admin, 'admin:global-alert', { message: 'before' })).toEqual({ ok: true })
      await eventually('the first alert arrives', async () => alerts.length === 1)

      // the next reconnection goes to B, as a balancer would send it elsewhere (the Manager dials its `uri` afresh on
      // each attempt; socket.io-client types it private)
      ;(client.io as unknown as { uri: string }).uri = b.url
      const away = nextEvent<string>(client, 'disconnect')
      // the client's side of the transport goes (the server sees `transport close`, a recoverable reason)
      client.io.engine.close()
      expect(await away).toBe('forced close')
      expect(await send(admin, 'admin:global-alert', { message: 'while away' })).toEqual({ ok: true })
      expect(client.connected).toBe(false)

      await nextEvent(client, 'connect')
      expect(client.recovered).toBe(true)
      await eventually('the missed alert arrives', async () => alerts.length === 2)
      expect(alerts).toEqual([{ message: 'before' }, { message: 'while away' }])

      // it now lives on B: the admins of the channel see it there, with its user
      const { connections } = (await send(admin, 'admin:connections')) as unknown as {
        connections: { socketId: string; userId: string; namespace: string }[]
      }
      expect(connections.filter((connection) => connection.socketId === client.id)).toEqual([
        expect.objectContaining({ socketId: client.id, userId, namespace: '/' }),
      ])
    })
  })
})

describe('a channel of its own: active users, then one instance shutting down', () => {
  let c: RealtimeInstance
  let d: RealtimeInstance
  let cClosed = false

  beforeAll(async () => {
    // the notice outlasts what the test checks during it (a refused connection, a client still connected) on any
    // machine: a loaded one must not close the transport under the checks
    c = await startRealtime({ REALTIME_RESTART_NOTICE_MS: String(scaledMs(5000)) })
    d = await startRealtime({}, { sharing: c })
  })
  afterAll(async () => {
    closeAll()
    for (const client of clients.splice(0)) client.close()
    await d?.close()
    if (!cClosed) await c?.close()
  })

  it('when the same user is connected on both instances and another on one, then activeUsers counts 2 on either', async () => {
    const userId = randomUUID()
    keep(await connect(c.url, '/', { token: accessToken('user', userId) }))
    keep(await connect(d.url, '/chat', { token: accessToken('user', userId) }))
    keep(await connect(d.url, '/notifications', { token: accessToken('user', userId) }))
    keep(await connect(d.url, '/'))
    await eventually('both instances count the two users', async () => {
      const counts = await Promise.all([c.app.realtime.activeUsers(), d.app.realtime.activeUsers()])
      return counts.every((count) => count === 2)
    })
    expect(await c.app.realtime.activeUsers()).toBe(2)
    expect(await d.app.realtime.activeUsers()).toBe(2)
  })

  it('when an instance closes, then its clients hear server:restart, lose their transport after the notice, new connections are refused meanwhile, and the other instance takes clients', async () => {
    const client = keep(await connect(c.url, '/'))
    const notice = nextEvent<{ message: string }>(client, 'server:restart')
    const disconnected = nextEvent<string>(client, 'disconnect')

    const closing = c.close()
    cClosed = true
    expect(await notice).toEqual({ message: realtimeMessages.restarting })
    // during the notice: the closing instance takes no one (its upgrades are answered 503), its clients still hear it
    expect(c.app.realtime.closing).toBe(true)
    await expect(connect(c.url, '/')).rejects.toThrow('websocket error')
    expect(client.connected).toBe(true)

    // the transport is closed (not the sockets disconnected): a client reconnects, as after any lost connection
    expect(await disconnected).toBe('transport close')
    await closing

    // the SDK connects to the instance still running
    const sdk = createRealtimeClient({
      url: d.url,
      token: () => accessToken('user'),
      reconnection: false,
      managerOptions: { extraHeaders: { 'x-forwarded-for': someAddress() } },
    })
    clients.push(sdk)
    const main = sdk.namespace('/')
    const welcome = await nextEvent<{ type: string; socketId: string }>(main as unknown as Socket, 'welcome')
    expect(main.connected).toBe(true)
    expect(welcome).toEqual({ type: 'welcome', message: 'Welcome, user of the tests', socketId: main.id })
    const echoed = await main.timeout(ackMs).emitWithAck('echo', { after: 'restart' })
    expect(echoed).toEqual({ ok: true, echo: { type: 'echo', payload: { after: 'restart' } } })
  })
})
