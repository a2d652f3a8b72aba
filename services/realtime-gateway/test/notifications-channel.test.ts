// /notifications of a listening realtime-gateway against the REAL notification service: a process of its own found in
// Consul (support/notification-process.ts), whose notifications are made as in production, from user.registered and
// order.placed on the broker. notifications:fetch and notifications:read go there with the socket's own credential
// (a bearer token or auth's session cookie); invalid payloads are refused before any call; an unknown service is a
// 503 that leaves the socket connected.
import { randomUUID } from 'node:crypto'
import { authNames, realtimeMessages } from '@meridian/contracts'
import { createEvent } from '@meridian/events'
import { accessToken, eventually, scaledMs, uniqueName } from '@meridian/testkit'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type NotificationProcess, startNotificationProcess } from './support/notification-process.ts'
import {
  allowedOrigin,
  connect,
  nextEvent,
  type RealtimeInstance,
  send,
  startRealtime,
} from './support/realtime.ts'

let notification: NotificationProcess
let realtime: RealtimeInstance
const sockets: Socket[] = []

beforeAll(async () => {
  notification = await startNotificationProcess()
  realtime = await startRealtime({ NOTIFICATION_SERVICE_NAME: notification.consulName })
}, scaledMs(180_000))

afterAll(async () => {
  for (const socket of sockets) socket.close()
  await realtime?.close()
  await notification?.stop()
}, scaledMs(60_000))

interface StoredNotification {
  id: string
  type: string
  title: string
  message: string
  createdAt: string
  readAt: string | null
}

/** The user's unread notifications as the notification service lists them over its REST API, newest first. */
async function unreadOf(userId: string): Promise<StoredNotification[]> {
  const response = await fetch(`${notification.baseUrl}/api/v1/notifications?unread=true&limit=100`, {
    headers: { authorization: `Bearer ${accessToken('user', userId)}` },
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { data: StoredNotification[] }).data
}

/** The channel's record of a notification: no readAt (spec: Real-time records). */
const onChannel = ({ id, type, title, message, createdAt }: StoredNotification) => ({
  id,
  type,
  title,
  message,
  createdAt,
})

/**
 * Notifications made as in production: user.registered (the welcome) and `orders` order.placed (order_placed) of
 * `userId` on the notification service's topics; resolves with the user's unread ones once all are there.
 */
async function seedNotifications(userId: string, orders = 1): Promise<StoredNotification[]> {
  await notification.publish(
    createEvent(
      'user.registered',
      { userId, email: `someone.${userId.slice(0, 8)}@example.com`, name: 'Ada Lovelace', role: 'user' },
      { source: 'auth' },
    ),
    userId,
  )
  for (let n = 0; n < orders; n++) {
    const orderId = randomUUID()
    await notification.publish(
      createEvent(
        'order.placed',
        {
          orderId,
          customerId: userId,
          total: 59.97,
          items: [
            { productId: randomUUID(), quantity: 2, price: 19.99 },
            { productId: randomUUID(), quantity: 1, price: 19.99 },
          ],
        },
        { source: 'order' },
      ),
      orderId,
    )
  }
  let unread: StoredNotification[] = []
  await eventually(`the notification service lists ${1 + orders} notifications of ${userId}`, async () => {
    unread = await unreadOf(userId)
    return unread.length === 1 + orders
  })
  return unread
}

async function notificationsSocket(instance: RealtimeInstance, userId: string): Promise<Socket> {
  const socket = await connect(instance.url, '/notifications', { token: accessToken('user', userId) })
  sockets.push(socket)
  return socket
}

describe('/notifications with the notification service', () => {
  it('when a user sends notifications:fetch, then notifications:list and the ack carry their unread notifications (no readAt), newest first', async () => {
    const userId = randomUUID()
    const stored = await seedNotifications(userId, 2)
    expect(stored.map((each) => each.type).sort()).toEqual(['order_placed', 'order_placed', 'welcome'])
    const socket = await notificationsSocket(realtime, userId)

    const listed = nextEvent<unknown[]>(socket, 'notifications:list')
    const answer = await send(socket, 'notifications:fetch')
    const expected = stored.map(onChannel)
    expect(answer).toEqual({ ok: true, notifications: expected })
    expect(await listed).toEqual(expected)
    for (const each of await listed) expect(each).not.toHaveProperty('readAt')
  })

  it("when another user fetches, then none of the first user's notifications are listed", async () => {
    const userId = randomUUID()
    const otherId = randomUUID()
    const mine = await seedNotifications(userId)
    const theirs = await seedNotifications(otherId)
    const other = await notificationsSocket(realtime, otherId)

    const answer = await send(other, 'notifications:fetch')
    expect(answer).toEqual({ ok: true, notifications: theirs.map(onChannel) })
    const listedIds = (answer.notifications as { id: string }[]).map((each) => each.id)
    for (const each of mine) expect(listedIds).not.toContain(each.id)

    const nobody = await notificationsSocket(realtime, randomUUID())
    expect(await send(nobody, 'notifications:fetch')).toEqual({ ok: true, notifications: [] })
  })

  it('when a user sends notifications:read, then the ack is {success: true, read} and the next fetch no longer lists them', async () => {
    const userId = randomUUID()
    const stored = await seedNotifications(userId, 2)
    const socket = await notificationsSocket(realtime, userId)
    const [first, second, kept] = stored as [StoredNotification, StoredNotification, StoredNotification]

    const answer = await send(socket, 'notifications:read', { notificationIds: [first.id, second.id] })
    expect(answer.ok).toBe(true)
    expect(answer.success).toBe(true)
    expect([...(answer.read as string[])].sort()).toEqual([first.id, second.id].sort())

    expect(await send(socket, 'notifications:fetch')).toEqual({ ok: true, notifications: [onChannel(kept)] })
    expect((await unreadOf(userId)).map((each) => each.id)).toEqual([kept.id])
  })

  it("when a user marks another user's notification read, then it is not among `read` and stays unread", async () => {
    const ownerId = randomUUID()
    const [owned] = (await seedNotifications(ownerId, 0)) as [StoredNotification]
    const intruder = await notificationsSocket(realtime, randomUUID())

    expect(await send(intruder, 'notifications:read', { notificationIds: [owned.id] })).toEqual({
      ok: true,
      success: true,
      read: [],
    })
    expect((await unreadOf(ownerId)).map((each) => each.id)).toEqual([owned.id])
  })

  it('when notifications:read carries an empty list or ids that are not uuids, then error VALIDATION_ERROR and a refused ack', async () => {
    const socket = await notificationsSocket(realtime, randomUUID())
    for (const payload of [
      { notificationIds: [] },
      { notificationIds: ['not-a-uuid', 'neither'] },
      { ids: [randomUUID()] },
      undefined,
    ]) {
      const error = nextEvent<{ code: string; message: string; details: unknown[] }>(socket, 'error')
      const answer = await send(socket, 'notifications:read', payload)
      const expected = {
        code: 'VALIDATION_ERROR',
        message: realtimeMessages.invalidMessageFormat,
        details: expect.arrayContaining([
          expect.objectContaining({ field: expect.any(String), message: expect.any(String) }),
        ]),
      }
      expect(answer, JSON.stringify(payload)).toEqual({ ok: false, error: expected })
      expect(await error).toEqual(expected)
    }
    expect(socket.connected).toBe(true)
  })

  it('when a cookie-session user fetches and reads, then the notification service answers for that session (the cookie is forwarded)', async () => {
    const userId = randomUUID()
    const stored = await seedNotifications(userId)
    const sessionId = randomUUID()
    await realtime.redis.set(
      `${authNames.sessionKeyPrefix}${sessionId}`,
      JSON.stringify({ userId, role: 'user', createdAt: new Date().toISOString() }),
      'EX',
      120,
    )
    const socket = await connect(realtime.url, '/notifications', {
      token: null,
      headers: { origin: allowedOrigin, cookie: `${authNames.sessionCookie}=${sessionId}` },
    })
    sockets.push(socket)

    expect(await send(socket, 'notifications:fetch')).toEqual({
      ok: true,
      notifications: stored.map(onChannel),
    })
    const [newest] = stored as [StoredNotification]
    expect(await send(socket, 'notifications:read', { notificationIds: [newest.id] })).toEqual({
      ok: true,
      success: true,
      read: [newest.id],
    })
    expect((await unreadOf(userId)).map((each) => each.id)).not.toContain(newest.id)

    // the session ends: the notification service refuses the cookie (401), the user's credential, not a failure of
    // notification: the answer is UNAUTHORIZED Invalid session; the socket stays
    await realtime.redis.del(`${authNames.sessionKeyPrefix}${sessionId}`)
    expect(await send(socket, 'notifications:fetch')).toEqual({
      ok: false,
      error: { code: 'UNAUTHORIZED', message: realtimeMessages.invalidSession },
    })
    expect(socket.connected).toBe(true)
  })
})

describe('/notifications without the notification service', () => {
  let orphan: RealtimeInstance

  beforeAll(async () => {
    orphan = await startRealtime({ NOTIFICATION_SERVICE_NAME: uniqueName('no-such-notification') })
  })
  afterAll(async () => {
    await orphan?.close()
  })

  it('when the notification service is not in Consul, then fetch and read are refused with SERVICE_UNAVAILABLE (and retryAfter) and the socket stays connected', async () => {
    const socket = await notificationsSocket(orphan, randomUUID())
    for (const [event, payload] of [
      ['notifications:fetch', undefined],
      ['notifications:read', { notificationIds: [randomUUID()] }],
    ] as const) {
      const error = nextEvent<{ code: string; message: string }>(socket, 'error')
      const answer = await send(socket, event, payload)
      expect(answer, event).toEqual({
        ok: false,
        // the error's retryAfter travels with it, as a rate limit's does
        error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), retryAfter: expect.any(Number) },
      })
      expect(await error).toEqual(answer.error)
    }
    expect(socket.connected).toBe(true)
    // the socket still works: an invalid payload is still answered at once
    expect((await send(socket, 'notifications:read', { notificationIds: [] })).ok).toBe(false)
    expect(socket.connected).toBe(true)
  })
})
