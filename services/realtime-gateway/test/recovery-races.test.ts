// Connection-state recovery gives a recovered socket each broadcast of its rooms exactly once, however its return
// interleaves with the broadcasts. Two instances of one channel; a real socket.io client of /notifications hears a
// notification on A, loses its transport, and comes back on B, recovered; notification:new is pushed into the user's
// room as the consumer pushes it (events/consumers.ts). The moments that raced in the cluster campaign are made
// certain here, not hoped for: B's restore of the session, or its admission of the restored socket, is held while a
// notification is pushed and B has delivered it (another socket of the user on B hears it); or B's reader of the
// stream is held, so that it comes late with what the restore already read.
import { randomUUID } from 'node:crypto'
import { accessToken, eventually } from '@meridian/testkit'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { notificationsRoom } from '../src/channels/notifications.ts'
import {
  connect,
  heard,
  loseTransport,
  nextEvent,
  pointAt,
  type RealtimeInstance,
  recoveringClient,
  socketKeeper,
  startRealtime,
} from './support/realtime.ts'

const { keep, closeAll } = socketKeeper()
let a: RealtimeInstance
let b: RealtimeInstance

/** What B runs, once, for a user whose session it restores, while the restored socket is not yet connected. */
const restoring = new Map<string, () => Promise<void>>()
const admitting = new Map<string, () => Promise<void>>()

beforeAll(async () => {
  a = await startRealtime()
  b = await startRealtime({}, { sharing: a })
  const namespace = b.app.realtime.namespace('/notifications')
  // after the adapter has read what the session missed (and the rooms were checked), before the socket is made
  const adapter = namespace.adapter as unknown as RestoringAdapter
  const restore = adapter.restoreSession.bind(adapter)
  adapter.restoreSession = async (pid, offset) => {
    const session = await restore(pid, offset)
    await runOnce(restoring, session?.data?.user?.userId)
    return session
  }
  // after the admission: the socket is made and in its rooms, not yet connected
  namespace.use((socket, next) => {
    if (!socket.recovered) return next()
    runOnce(admitting, socket.data.user.userId).then(
      () => next(),
      (error: unknown) => next(error as Error),
    )
  })
})
afterAll(async () => {
  closeAll()
  await b?.close()
  await a?.close()
})

interface RestoringAdapter {
  restoreSession(pid: string, offset: string): Promise<{ data?: { user?: { userId: string } } } | undefined>
}

async function runOnce(held: Map<string, () => Promise<void>>, userId: string | undefined): Promise<void> {
  const run = userId === undefined ? undefined : held.get(userId)
  if (!run) return
  held.delete(userId as string)
  await run()
}

interface Notification {
  id: string
  type: string
  title: string
  message: string
  createdAt: string
}

/** A notification as the consumer pushes it, told apart by its title. */
const notificationTitled = (title: string): Notification => ({
  id: randomUUID(),
  type: 'order_placed',
  title,
  message: 'Your order was placed.',
  createdAt: new Date().toISOString(),
})

/** Pushes notification:new titled `title` into the user's room on `instance`, as the consumer does. */
function push(instance: RealtimeInstance, userId: string, title: string): Notification {
  const notification = notificationTitled(title)
  instance.app.realtime
    .namespace('/notifications')
    .to(notificationsRoom(userId))
    .emit('notification:new', notification)
  return notification
}

/** Until `notification` is among `received`. */
const arrived = (received: Notification[], notification: Notification) =>
  eventually(
    `${notification.title} arrives`,
    async () => received.some((each) => each.id === notification.id),
    undefined,
    10,
  )

const titles = (received: Notification[]) => received.map((each) => each.title)

/**
 * A /notifications client of `userId` on A that heard `before` (so it has an offset in the stream to resume from) and
 * then lost its transport: it stays away until pointed at B. Another socket of the user stays on B: it hears what B
 * delivers to the user's room.
 */
async function awayFromA(userId: string) {
  const onB = keep(await connect(b.url, '/notifications', { token: accessToken('user', userId) }))
  const deliveredOnB = heard<Notification>(onB, 'notification:new')
  const client = keep(recoveringClient(a.url, '/notifications', userId))
  const received = heard<Notification>(client, 'notification:new')
  await eventually('the client is connected', async () => client.connected, undefined, 10)
  await arrived(received, push(a, userId, 'before'))
  await loseTransport(client, a, '/notifications')
  return { client, received, deliveredOnB }
}

/** The client comes back, on B. */
async function backOnB(client: Socket): Promise<void> {
  const back = nextEvent(client, 'connect', 10_000)
  pointAt(client, b.url)
  await back
}

describe('a recovered socket gets each broadcast of its rooms exactly once', () => {
  it('when a notification is pushed on another instance and delivered on B while B restores the session, then the recovered client gets it once, after what it missed while away', async () => {
    const userId = randomUUID()
    const { client, received, deliveredOnB } = await awayFromA(userId)
    await arrived(deliveredOnB, push(a, userId, 'while away'))
    restoring.set(userId, async () => {
      await arrived(deliveredOnB, push(a, userId, 'during the restore'))
    })

    await backOnB(client)
    expect(client.recovered).toBe(true)
    // whatever comes before it on the connection has come once it is here
    await arrived(received, push(a, userId, 'after'))
    expect(titles(received)).toEqual(['before', 'while away', 'during the restore', 'after'])
  })

  it('when a notification is pushed on B itself while B admits the restored socket, then the recovered client gets it once', async () => {
    const userId = randomUUID()
    const { client, received, deliveredOnB } = await awayFromA(userId)
    await arrived(deliveredOnB, push(a, userId, 'while away'))
    admitting.set(userId, async () => {
      await arrived(deliveredOnB, push(b, userId, 'during the admission'))
    })

    await backOnB(client)
    expect(client.recovered).toBe(true)
    await arrived(received, push(b, userId, 'after'))
    expect(titles(received)).toEqual(['before', 'while away', 'during the admission', 'after'])
  })

  it("when notifications go to another user's room or to all but this user's room while B restores the session, then the recovered client gets none of them", async () => {
    const userId = randomUUID()
    const otherId = randomUUID()
    const { client, received } = await awayFromA(userId)
    const other = keep(await connect(b.url, '/notifications', { token: accessToken('user', otherId) }))
    const deliveredToOther = heard<Notification>(other, 'notification:new')
    restoring.set(userId, async () => {
      await arrived(deliveredToOther, push(a, otherId, "another user's"))
      // to both users' rooms, except this user's
      const butThisUser = notificationTitled('all but this user')
      a.app.realtime
        .namespace('/notifications')
        .to([notificationsRoom(userId), notificationsRoom(otherId)])
        .except(notificationsRoom(userId))
        .emit('notification:new', butThisUser)
      await arrived(deliveredToOther, butThisUser)
    })

    await backOnB(client)
    expect(client.recovered).toBe(true)
    await arrived(received, push(a, userId, 'after'))
    expect(titles(received)).toEqual(['before', 'after'])
  })

  it("when B's reader of the stream comes late with a notification the restore already gave the client, then the client does not get it a second time", async () => {
    const userId = randomUUID()
    const { client, received } = await awayFromA(userId)
    const reader = heldReader(b)
    const whileAway = push(a, userId, 'while away')
    await eventually('B has read it, and holds it', async () => reader.holds(whileAway.id), undefined, 10)

    await backOnB(client)
    expect(client.recovered).toBe(true)
    expect(titles(received)).toEqual(['before', 'while away'])
    reader.release()
    await arrived(received, push(a, userId, 'after'))
    expect(titles(received)).toEqual(['before', 'while away', 'after'])
  })
})

/**
 * B's reader of the stream, for /notifications, held: what it reads is kept until `release`, then handed to the
 * adapter in order (as a reader that fell behind would hand it).
 */
function heldReader(instance: RealtimeInstance) {
  const adapter = instance.app.realtime.namespace('/notifications').adapter as unknown as {
    onRawMessage(raw: { data?: string }, offset: string): void
  }
  const read = adapter.onRawMessage
  const held: [{ data?: string }, string][] = []
  adapter.onRawMessage = (raw, offset) => {
    held.push([raw, offset])
  }
  return {
    holds: (notificationId: string) => held.some(([raw]) => raw.data?.includes(notificationId) === true),
    release(): void {
      adapter.onRawMessage = read
      for (const [raw, offset] of held.splice(0)) read.call(adapter, raw, offset)
    },
  }
}
