// The realtime channel end to end, through the gateway only, with the SDK (@meridian/realtime-client over
// socket.io-client, WebSocket transport): an order's notification reaches its customer live and nobody else, and is
// in the list; a chat room created over REST carries messages; an instance of the channel that stops tells its
// clients, which reconnect to the other instance (two run: src/global-setup.ts).
import { setTimeout as sleep } from 'node:timers/promises'
import type { RealtimeNotification } from '@meridian/contracts'
import { createRealtimeClient, type RealtimeClient, request } from '@meridian/realtime-client'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, type Customer, cards, e2eClient } from '../src/client.ts'
import '../src/system-context.ts'
import { scaledMs } from '@meridian/testkit'

const system = inject('system')
const client = e2eClient(system)
// the tests' scaled wait for what the system does in its own time
const patience = scaledMs(60_000)
const clients: RealtimeClient[] = []

/** A client of the channel through the gateway, signed in as `caller`, reconnecting quickly. */
function realtimeOf(caller: Caller): RealtimeClient {
  const realtime = createRealtimeClient({
    url: system.gatewayUrl,
    token: () => caller.token,
    reconnection: { attempts: 20, initialDelayMs: 200, maxDelayMs: 1000, randomizationFactor: 0.5 },
  })
  clients.push(realtime)
  return realtime
}

/** Resolves once the namespace socket is connected. */
async function connected<
  Socket extends { connected: boolean; once(event: 'connect', listener: () => void): unknown },
>(socket: Socket): Promise<Socket> {
  if (!socket.connected) await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  return socket
}

afterAll(() => {
  for (const realtime of clients) realtime.close()
})

describe('the realtime channel through the gateway', () => {
  let admin: Caller
  let customer: Customer
  let bystander: Customer

  beforeAll(async () => {
    admin = await client.loginAdmin()
    customer = await client.registerCustomer()
    bystander = await client.registerCustomer()
  })

  it("when a customer places an order, then that customer (and nobody else) hears notification:new, and it is in the customer's list", async () => {
    const heard: RealtimeNotification[] = []
    const overheard: RealtimeNotification[] = []
    const mine = await connected(realtimeOf(customer).namespace('/notifications'))
    const theirs = await connected(realtimeOf(bystander).namespace('/notifications'))
    mine.on('notification:new', (notification) => heard.push(notification))
    theirs.on('notification:new', (notification) => overheard.push(notification))

    const product = await client.createProduct(admin, { stock: 5 })
    const orderId = await client.placeOrderOk(customer, { product, quantity: 1, card: cards.good })

    const deadline = Date.now() + patience
    while (!heard.some((notification) => notification.type === 'order_placed') && Date.now() < deadline) {
      await sleep(100)
    }
    const confirmation = heard.find((notification) => notification.type === 'order_placed')
    expect(confirmation, `no order_placed for order ${orderId}`).toMatchObject({
      id: expect.any(String),
      title: expect.any(String),
      createdAt: expect.any(String),
    })

    const { body: list } = await client.request<{
      data: { id: string; type: string; readAt: string | null }[]
    }>('GET', '/api/v1/notifications?unread=true', { token: customer.token })
    expect(list.data).toContainEqual(
      expect.objectContaining({ id: confirmation?.id, type: 'order_placed', readAt: null }),
    )

    // fetched over the channel too, and marked read there
    const fetched = await request(mine, 'notifications:fetch')
    expect(fetched.notifications.map((notification) => notification.id)).toContain(confirmation?.id)
    const read = await request(mine, 'notifications:read', { notificationIds: [confirmation?.id ?? ''] })
    expect(read).toMatchObject({ success: true, read: [confirmation?.id] })

    // the bystander: nothing of the customer's, ever; a pause, scaled: nothing can be waited for that does not come.
    // Their own welcome (for their own registration) may reach them after they connected on a loaded machine (a
    // pre-stop run heard it there): it is theirs, not the customer's
    await sleep(scaledMs(500))
    expect(overheard.filter((notification) => notification.type !== 'welcome')).toEqual([])
  })

  it('when a chat room is created over REST, then its members talk in it over the channel', async () => {
    const { body: room } = await client.request<{ id: string }>('POST', '/api/v1/chat/rooms', {
      token: customer.token,
      body: { name: 'e2e room' },
    })
    expect(room.id).toEqual(expect.any(String))
    const added = await client.request('POST', `/api/v1/chat/rooms/${room.id}/members`, {
      token: customer.token,
      body: { userId: bystander.id },
    })
    expect(added.status).toBe(201)

    const speaker = await connected(realtimeOf(customer).namespace('/chat'))
    const listener = await connected(realtimeOf(bystander).namespace('/chat'))
    await request(speaker, 'chat:join', { roomId: room.id })
    await request(listener, 'chat:join', { roomId: room.id })
    const message = new Promise((resolve) => listener.once('chat:message', resolve))
    await request(speaker, 'chat:message', { roomId: room.id, text: 'hello through the gateway' })
    expect(await message).toMatchObject({
      roomId: room.id,
      userId: customer.id,
      text: 'hello through the gateway',
    })
  })

  it('when an instance of the channel stops (SIGTERM), then its clients hear server:restart and reconnect to the other one', async () => {
    const first = system.services['realtime-gateway']
    const second = system.services['realtime-gateway#2']
    // two instances of the channel, each a process of its own
    expect(first?.pid, 'the first realtime-gateway instance').toEqual(expect.any(Number))
    expect(second?.pid, 'the second realtime-gateway instance').toEqual(expect.any(Number))
    expect(second?.pid).not.toBe(first?.pid)

    // enough clients that the gateway's round robin puts some on each instance
    const sockets = await Promise.all(
      Array.from({ length: 6 }, async () => connected(realtimeOf(customer).namespace('/'))),
    )
    // a told client's next connect is its reconnection (to the other instance: the first has left Consul)
    const reconnections: Promise<void>[] = []
    for (const socket of sockets) {
      socket.once('server:restart', () => {
        reconnections.push(new Promise<void>((resolve) => socket.once('connect', () => resolve())))
      })
    }
    process.kill(first?.pid ?? 0, 'SIGTERM')
    await expect.poll(() => reconnections.length).toBeGreaterThan(0)
    await Promise.all(reconnections)

    // every client is connected again (the told ones to the other instance) and answers
    await expect.poll(() => sockets.every((socket) => socket.connected), { timeout: patience }).toBe(true)
    for (const socket of sockets) {
      expect(socket.connected).toBe(true)
      expect(await request(socket, 'echo', 'still here')).toMatchObject({ echo: { payload: 'still here' } })
    }
    // the first instance has gone
    await expect
      .poll(
        () =>
          fetch(first?.baseUrl ?? '', { signal: AbortSignal.timeout(1000) }).then(
            () => 'up',
            () => 'gone',
          ),
        {
          timeout: scaledMs(30_000),
        },
      )
      .toBe('gone')
  })
})
