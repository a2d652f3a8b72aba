// Notifications over HTTP on a real database and Redis: the list (own only, newest first, paged, unread and type
// filters, a return's and an exchange's notifications among them, an admin's userId, a user's foreign userId 403), reading one (a foreign
// one is 404), marking read one by one and many at once (idempotent, foreign ids left out), the validation and
// credential errors, and the /api alias.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import { asAdmin, asUser, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildNotificationTestApp, type NotificationTestApp } from './support/app.ts'
import {
  createTestNotification,
  createTestNotifications,
  exchangeEvents,
  returnEvents,
  shipmentCreated,
} from './support/notifications.ts'

let notification: NotificationTestApp

beforeAll(async () => {
  notification = await buildNotificationTestApp({ ...tokenEnv })
})

afterAll(async () => {
  await notification?.close()
})

type Headers = Record<string, string>
const get = (url: string, headers: Headers) => notification.app.inject({ method: 'GET', url, headers })
const send = (method: 'POST' | 'PATCH', url: string, headers: Headers, body?: unknown) =>
  notification.app.inject({
    method,
    url,
    headers,
    ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
  })
const post = (url: string, headers: Headers, body?: unknown) => send('POST', url, headers, body)
const readMany = (notificationIds: unknown, headers: Headers, prefix = '/api/v1') =>
  send('PATCH', `${prefix}/notifications`, headers, { notificationIds })
const ids = (answer: { json(): { data: { id: string }[] } }) => answer.json().data.map((each) => each.id)

describe('GET /api/v1/notifications', () => {
  it('when a user lists, then only their own, newest first, in the pagination envelope (/api/v1 and /api)', async () => {
    const userId = randomUUID()
    const [first, second, third] = await createTestNotifications(notification, userId, 3)
    await createTestNotification(notification, randomUUID())

    const answer = await get('/api/v1/notifications', asUser(userId))
    expect(answer.statusCode).toBe(200)
    const envelope = answer.json()
    expect(ids(answer)).toEqual([third?.id, second?.id, first?.id])
    expect(envelope.data[0]).toEqual({
      id: third?.id,
      type: 'welcome',
      title: 'Welcome to Meridian',
      message: 'Hello Ada Lovelace, welcome to Meridian. Your account is ready.',
      createdAt: third?.createdAt,
      readAt: null,
    })
    expect(envelope.meta).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 })
    expect(envelope.links).toEqual({
      self: '/api/v1/notifications?page=1&limit=20',
      first: '/api/v1/notifications?page=1&limit=20',
      prev: null,
      next: null,
      last: '/api/v1/notifications?page=1&limit=20',
    })
    expect(ids(await get('/api/notifications', asUser(userId)))).toEqual([third?.id, second?.id, first?.id])
  })

  it('when paged and sorted, then the pages follow the order, with their links; a limit over 100 is 422', async () => {
    const userId = randomUUID()
    const [first, second, third] = await createTestNotifications(notification, userId, 3)

    const page2 = await get('/api/v1/notifications?limit=2&page=2', asUser(userId))
    expect(ids(page2)).toEqual([first?.id])
    expect(page2.json().meta).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 })
    expect(page2.json().links.prev).toBe('/api/v1/notifications?page=1&limit=2')
    expect(page2.json().links.next).toBeNull()

    const oldestFirst = await get('/api/v1/notifications?sort=createdAt:asc', asUser(userId))
    expect(ids(oldestFirst)).toEqual([first?.id, second?.id, third?.id])

    for (const query of ['limit=101', 'limit=0', 'page=0', 'sort=title:asc', 'unread=maybe', 'type=spam']) {
      expectErrorEnvelope(
        await get(`/api/v1/notifications?${query}`, asUser(userId)),
        422,
        'VALIDATION_ERROR',
        {
          context: query,
        },
      )
    }
  })

  it('when filtered by unread, then only unread (true) or only read (false) ones, the filter kept in the links', async () => {
    const userId = randomUUID()
    const [first, second, third] = await createTestNotifications(notification, userId, 3)
    expect((await post(`/api/v1/notifications/${second?.id}/read`, asUser(userId))).statusCode).toBe(200)

    const unread = await get('/api/v1/notifications?unread=true', asUser(userId))
    expect(ids(unread)).toEqual([third?.id, first?.id])
    expect(unread.json().links.self).toBe('/api/v1/notifications?unread=true&page=1&limit=20')
    const read = await get('/api/v1/notifications?unread=false', asUser(userId))
    expect(ids(read)).toEqual([second?.id])
    expect(read.json().data[0].readAt).toEqual(expect.any(String))
    expect(ids(await get('/api/v1/notifications?type=welcome', asUser(userId)))).toHaveLength(3)
    expect(ids(await get('/api/v1/notifications?type=payment_failed', asUser(userId)))).toEqual([])
  })

  it("when a return's steps made notifications, then the list shows them as any other and the type filter picks each", async () => {
    const userId = randomUUID()
    const orderId = randomUUID()
    const returned = returnEvents(orderId, userId)
    const { notifications } = notification
    await transaction(notification.sql, async (tx) => {
      await notifications.notifyReturnRequested(returned.requested, tx)
      await notifications.notifyReturnReceived(returned.received, tx)
      await notifications.notifyReturnCompleted(returned.completed, tx)
      await notifications.notifyReturnRejected(returned.rejected, tx)
    })

    const answer = await get('/api/v1/notifications', asUser(userId))
    expect(answer.statusCode).toBe(200)
    expect(answer.json().data.map((each: { type: string }) => each.type)).toEqual([
      'return_rejected',
      'return_completed',
      'return_received',
      'return_requested',
    ])
    for (const type of ['return_requested', 'return_received', 'return_completed', 'return_rejected']) {
      const filtered = await get(`/api/v1/notifications?type=${type}`, asUser(userId))
      expect(filtered.json().data.map((each: { type: string }) => each.type)).toEqual([type])
    }
    const [completed] = (await get('/api/v1/notifications?type=return_completed', asUser(userId))).json().data
    expect(completed).toEqual({
      id: expect.any(String),
      type: 'return_completed',
      title: 'Return refunded',
      message: `Your return ${returned.completed.data.returnId} for order ${orderId} is complete: 39.98 refunded.`,
      createdAt: returned.completed.timestamp,
      readAt: null,
    })
  })

  it("when an exchange's steps and its replacements' shipment made notifications, then the list shows them as any other and the type filter picks each", async () => {
    const userId = randomUUID()
    const orderId = randomUUID()
    const exchanged = exchangeEvents(orderId, userId, { charge: 0, refund: 7.5 })
    const { notifications } = notification
    await transaction(notification.sql, async (tx) => {
      await notifications.notifyExchangeRequested(exchanged.requested, tx)
      await notifications.notifyExchangeAwaitingGoods(exchanged.awaitingGoods, tx)
      await notifications.notifyExchangeCompleted(exchanged.completed, tx)
      await notifications.notifyExchangeFailed(exchanged.failed, tx)
      // the replacements' shipment carries the exchange's id as its orderId
      await notifications.notifyShipmentCreated(shipmentCreated(exchanged.exchangeId), tx)
    })

    const answer = await get('/api/v1/notifications', asUser(userId))
    expect(answer.statusCode).toBe(200)
    expect(answer.json().data.map((each: { type: string }) => each.type)).toEqual([
      'shipment_created',
      'exchange_failed',
      'exchange_completed',
      'exchange_awaiting_goods',
      'exchange_requested',
    ])
    const types = ['exchange_requested', 'exchange_awaiting_goods', 'exchange_completed', 'exchange_failed']
    for (const type of types) {
      const filtered = await get(`/api/v1/notifications?type=${type}`, asUser(userId))
      expect(filtered.json().data.map((each: { type: string }) => each.type)).toEqual([type])
    }
    const [completed] = (await get('/api/v1/notifications?type=exchange_completed', asUser(userId))).json()
      .data
    expect(completed).toEqual({
      id: expect.any(String),
      type: 'exchange_completed',
      title: 'Exchange completed',
      message: `Your exchange ${exchanged.exchangeId} for order ${orderId} is complete: the replacements are on their way; 7.50 refunded.`,
      createdAt: exchanged.completed.timestamp,
      readAt: null,
    })
  })

  it("when an admin passes userId, then that user's notifications; without it, the admin's own (none)", async () => {
    const userId = randomUUID()
    const [only] = await createTestNotifications(notification, userId, 1)
    expect(ids(await get(`/api/v1/notifications?userId=${userId}`, asAdmin()))).toEqual([only?.id])
    expect((await get('/api/v1/notifications', asAdmin())).json().meta.total).toBe(0)
  })

  it("when a user passes someone else's userId, then 403; their own userId is fine; a bad userId 422; no credentials 401", async () => {
    const userId = randomUUID()
    const [only] = await createTestNotifications(notification, userId, 1)
    expectErrorEnvelope(
      await get(`/api/v1/notifications?userId=${randomUUID()}`, asUser(userId)),
      403,
      'FORBIDDEN',
    )
    expect(ids(await get(`/api/v1/notifications?userId=${userId}`, asUser(userId)))).toEqual([only?.id])
    expectErrorEnvelope(await get('/api/v1/notifications?userId=nobody', asAdmin()), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await get('/api/v1/notifications', {}), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(
      await get('/api/notifications', { authorization: 'Bearer nope' }),
      401,
      'UNAUTHORIZED',
    )
  })
})

describe('GET /api/v1/notifications/{id}', () => {
  it('when its user reads it, then 200; an admin too; another user 404 (its existence is not told); unknown 404', async () => {
    const userId = randomUUID()
    const made = await createTestNotification(notification, userId)
    for (const path of [`/api/v1/notifications/${made.id}`, `/api/notifications/${made.id}`]) {
      const answer = await get(path, asUser(userId))
      expect(answer.statusCode).toBe(200)
      expect(answer.json()).toEqual(made)
    }
    expect((await get(`/api/v1/notifications/${made.id}`, asAdmin())).json()).toEqual(made)
    expectErrorEnvelope(await get(`/api/v1/notifications/${made.id}`, asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await get(`/api/v1/notifications/${randomUUID()}`, asUser(userId)), 404, 'NOT_FOUND')
  })

  it('when the id is not a uuid, then 422 naming it; without credentials 401', async () => {
    const bad = expectErrorEnvelope(
      await get('/api/v1/notifications/not-a-uuid', asUser()),
      422,
      'VALIDATION_ERROR',
    )
    expect(bad.details).toEqual([expect.objectContaining({ field: 'id' })])
    expectErrorEnvelope(await get(`/api/v1/notifications/${randomUUID()}`, {}), 401, 'UNAUTHORIZED')
  })
})

describe('POST /api/v1/notifications/{id}/read', () => {
  it('when its user marks it read, then 200 with readAt; again, the same first readAt', async () => {
    const userId = randomUUID()
    const made = await createTestNotification(notification, userId)
    const answer = await post(`/api/v1/notifications/${made.id}/read`, asUser(userId))
    expect(answer.statusCode).toBe(200)
    const read = answer.json()
    expect(read).toEqual({ ...made, readAt: expect.any(String) })
    expect(Date.parse(read.readAt)).toBeLessThanOrEqual(Date.now())

    const again = await post(`/api/notifications/${made.id}/read`, asUser(userId))
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(read)
    expect((await get(`/api/v1/notifications/${made.id}`, asUser(userId))).json()).toEqual(read)
  })

  it('when someone else marks it, then 404 for a user and 403 for an admin, and it stays unread; bad id 422; no credentials 401', async () => {
    const userId = randomUUID()
    const made = await createTestNotification(notification, userId)
    expectErrorEnvelope(await post(`/api/v1/notifications/${made.id}/read`, asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await post(`/api/v1/notifications/${made.id}/read`, asAdmin()), 403, 'FORBIDDEN')
    expectErrorEnvelope(await post(`/api/v1/notifications/${randomUUID()}/read`, asAdmin()), 404, 'NOT_FOUND')
    expect((await get(`/api/v1/notifications/${made.id}`, asUser(userId))).json().readAt).toBeNull()
    expectErrorEnvelope(
      await post('/api/v1/notifications/nope/read', asUser(userId)),
      422,
      'VALIDATION_ERROR',
    )
    expectErrorEnvelope(await post(`/api/v1/notifications/${made.id}/read`, {}), 401, 'UNAUTHORIZED')
  })
})

describe('PATCH /api/v1/notifications (mark several read)', () => {
  it("when a user marks several, then {success, read} lists theirs in the request's order; others' and unknown ids are left out", async () => {
    const userId = randomUUID()
    const [first, second, third] = await createTestNotifications(notification, userId, 3)
    const someoneElses = await createTestNotification(notification, randomUUID())
    const unknown = randomUUID()

    const answer = await readMany([third?.id, someoneElses.id, unknown, first?.id], asUser(userId))
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({ success: true, read: [third?.id, first?.id] })
    expect(ids(await get('/api/v1/notifications?unread=true', asUser(userId)))).toEqual([second?.id])
    // the other user's stays unread
    expect((await get(`/api/v1/notifications/${someoneElses.id}`, asAdmin())).json().readAt).toBeNull()
  })

  it('when marked again, then the same ids and the first readAt kept (/api too)', async () => {
    const userId = randomUUID()
    const [first, second] = await createTestNotifications(notification, userId, 2)
    await readMany([first?.id], asUser(userId))
    const firstRead = (await get(`/api/v1/notifications/${first?.id}`, asUser(userId))).json().readAt
    const again = await readMany([first?.id, second?.id], asUser(userId), '/api')
    expect(again.json()).toEqual({ success: true, read: [first?.id, second?.id] })
    expect((await get(`/api/v1/notifications/${first?.id}`, asUser(userId))).json().readAt).toBe(firstRead)
  })

  it('when only foreign or unknown ids are sent, then success with an empty read list', async () => {
    const someoneElses = await createTestNotification(notification, randomUUID())
    const answer = await readMany([someoneElses.id, randomUUID()], asUser())
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({ success: true, read: [] })
  })

  it('when the body is wrong (empty, over 100, not uuids, repeated, missing), then 422 naming notificationIds; no credentials 401', async () => {
    const tooMany = Array.from({ length: 101 }, () => randomUUID())
    const repeated = randomUUID()
    const bodies: [string, unknown][] = [
      ['empty', []],
      ['101 ids', tooMany],
      ['not uuids', ['nope']],
      ['repeated', [repeated, repeated]],
      ['not an array', 'abc'],
    ]
    for (const [context, notificationIds] of bodies) {
      const error = expectErrorEnvelope(await readMany(notificationIds, asUser()), 422, 'VALIDATION_ERROR', {
        context,
      })
      expect(error.details?.[0]?.field, context).toMatch(/^notificationIds/)
    }
    expectErrorEnvelope(await send('PATCH', '/api/v1/notifications', asUser(), {}), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await readMany([randomUUID()], {}), 401, 'UNAUTHORIZED')
    // 100 is the most, and fine
    expect((await readMany(tooMany.slice(0, 100), asUser())).json()).toEqual({ success: true, read: [] })
  })
})

describe('the OpenAPI document', () => {
  it('when read, then it documents the four notification routes with every status they answer', async () => {
    const document = (await notification.app.inject({ method: 'GET', url: '/docs/json' })).json()
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>
    expect(Object.keys(paths['/api/v1/notifications']?.get?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '401', '403', '422']),
    )
    expect(Object.keys(paths['/api/v1/notifications/{id}']?.get?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '401', '404', '422']),
    )
    expect(Object.keys(paths['/api/v1/notifications']?.patch?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '401', '422']),
    )
    expect(Object.keys(paths['/api/v1/notifications/{id}/read']?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '401', '403', '404', '422']),
    )
    expect(paths['/api/notifications']).toBeUndefined()
  })
})
