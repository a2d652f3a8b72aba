// Notification preferences over HTTP (the user themself or an admin; every channel on by default), honoured by each
// channel as the consumers make notifications (e-mail off: no mail row; in-app off: not listed nor readable; realtime
// off: no notification.created), and the one-click unsubscribe link (a good token turns e-mail of its type off for its
// user only; a tampered one, or one of another secret, is 400 and changes nothing; GET only shows a page).
import { randomUUID } from 'node:crypto'
import { unsubscribeTokens } from '@meridian/mail'
import { asAdmin, asUser, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildNotificationTestApp, type NotificationTestApp } from './support/app.ts'
import { closedPort, deliveriesOf, handle } from './support/email.ts'
import { orderPlaced, outboxOf, paymentFailed } from './support/notifications.ts'

let notification: NotificationTestApp

beforeAll(async () => {
  notification = await buildNotificationTestApp({
    ...tokenEnv,
    SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`,
    EMAIL_SEND_INTERVAL_MS: '600000',
  })
})

afterAll(async () => {
  await notification?.close()
})

type Headers = Record<string, string>
const path = (userId: string) => `/api/v1/users/${userId}/notification-preferences`
const getPreferences = (userId: string, headers: Headers) =>
  notification.app.inject({ method: 'GET', url: path(userId), headers })
const putPreferences = (userId: string, headers: Headers, preferences: Record<string, unknown>) =>
  notification.app.inject({ method: 'PUT', url: path(userId), headers, payload: { preferences } })

const on = { inApp: true, realtime: true, email: true }

describe('GET and PUT /api/v1/users/{id}/notification-preferences', () => {
  it('when a user reads theirs first, then every type has every channel on', async () => {
    const userId = randomUUID()
    const answer = await getPreferences(userId, asUser(userId))
    expect(answer.statusCode).toBe(200)
    const { preferences } = answer.json()
    expect(answer.json().userId).toBe(userId)
    expect(Object.keys(preferences)).toContain('order_placed')
    expect(
      Object.values(preferences).every((channels) => JSON.stringify(channels) === JSON.stringify(on)),
    ).toBe(true)
  })

  it('when a user replaces theirs, then what they left out is on; an admin may too; anyone else is 403, nobody 401', async () => {
    const userId = randomUUID()
    const put = await putPreferences(userId, asUser(userId), {
      order_placed: { email: false },
      welcome: { inApp: false },
    })
    expect(put.statusCode).toBe(200)
    expect(put.json().preferences.order_placed).toEqual({ ...on, email: false })
    expect(put.json().preferences.welcome).toEqual({ ...on, inApp: false })
    expect((await getPreferences(userId, asUser(userId))).json().preferences).toEqual(put.json().preferences)

    const byAdmin = await putPreferences(userId, asAdmin(), { payment_failed: { realtime: false } })
    expect(byAdmin.statusCode).toBe(200)
    expect(byAdmin.json().preferences.order_placed).toEqual(on)
    expect(byAdmin.json().preferences.payment_failed).toEqual({ ...on, realtime: false })

    // the same again, and a change of a type that has its row: written over, never a conflict (the API fuzzing
    // found a 409 here: the replace deleted and inserted the same keys in one statement)
    for (const attempt of [1, 2]) {
      const again = await putPreferences(userId, asUser(userId), { payment_failed: { realtime: false } })
      expect(again.statusCode, `attempt ${attempt}`).toBe(200)
    }
    const changed = await putPreferences(userId, asUser(userId), { payment_failed: { email: false } })
    expect(changed.statusCode).toBe(200)
    expect(changed.json().preferences.payment_failed).toEqual({ ...on, email: false })
    // at once, with rows there: each answers 200 and one of them holds
    const racing = await Promise.all(
      [false, true].map((inApp) =>
        putPreferences(userId, asUser(userId), { welcome: { inApp, email: false } }),
      ),
    )
    expect(racing.map((answer) => answer.statusCode)).toEqual([200, 200])

    expectErrorEnvelope(await getPreferences(userId, asUser(randomUUID())), 403, 'FORBIDDEN')
    expectErrorEnvelope(await putPreferences(userId, asUser(randomUUID()), {}), 403, 'FORBIDDEN')
    expectErrorEnvelope(
      await notification.app.inject({ method: 'GET', url: path(userId) }),
      401,
      'UNAUTHORIZED',
    )
    expectErrorEnvelope(
      await putPreferences(userId, asUser(userId), { no_such_type: { email: false } }),
      422,
      'VALIDATION_ERROR',
    )
  })
})

describe('each channel honours the preferences', () => {
  it('when e-mail of order_placed is off, then order.placed writes no mail row, while payment_failed still does', async () => {
    const customerId = randomUUID()
    await putPreferences(customerId, asUser(customerId), { order_placed: { email: false } })
    const placed = orderPlaced({ customerId, customerEmail: 'ada@example.com' })
    await handle(notification, placed)
    expect(await deliveriesOf(notification, customerId)).toHaveLength(0)
    await handle(notification, paymentFailed(placed.data.orderId))
    expect(await deliveriesOf(notification, customerId)).toHaveLength(1)
    // the other channels are untouched
    expect((await outboxOf(notification, customerId)).map((row) => row.payload.data.type)).toEqual([
      'order_placed',
      'payment_failed',
    ])
  })

  it('when in-app is off, then the notification is neither listed nor readable, but still mailed and pushed', async () => {
    const customerId = randomUUID()
    await putPreferences(customerId, asUser(customerId), { order_placed: { inApp: false } })
    await handle(notification, orderPlaced({ customerId }))
    const list = await notification.app.inject({
      method: 'GET',
      url: '/api/v1/notifications',
      headers: asUser(customerId),
    })
    expect(list.json().data).toEqual([])
    const [stored] = await notification.sql<
      { id: string }[]
    >`select id from notifications where user_id = ${customerId}`
    expect(stored).toBeDefined()
    const one = await notification.app.inject({
      method: 'GET',
      url: `/api/v1/notifications/${stored?.id}`,
      headers: asUser(customerId),
    })
    expectErrorEnvelope(one, 404, 'NOT_FOUND')
    expect(await deliveriesOf(notification, customerId)).toHaveLength(1)
    expect(await outboxOf(notification, customerId)).toHaveLength(1)
  })

  it('when realtime is off, then no notification.created, but the notification is listed and mailed', async () => {
    const customerId = randomUUID()
    await putPreferences(customerId, asUser(customerId), { order_placed: { realtime: false } })
    await handle(notification, orderPlaced({ customerId }))
    expect(await outboxOf(notification, customerId)).toHaveLength(0)
    const list = await notification.app.inject({
      method: 'GET',
      url: '/api/v1/notifications',
      headers: asUser(customerId),
    })
    expect(list.json().data.map((each: { type: string }) => each.type)).toEqual(['order_placed'])
    expect(await deliveriesOf(notification, customerId)).toHaveLength(1)
  })
})

describe('the one-click unsubscribe link', () => {
  const tokens = () => unsubscribeTokens(notification.config.UNSUBSCRIBE_SECRET)
  const unsubscribe = (token: string, body = 'List-Unsubscribe=One-Click', headers: Headers = {}) =>
    notification.app.inject({
      method: 'POST',
      url: `/api/v1/notifications/unsubscribe?token=${encodeURIComponent(token)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: body,
    })
  const emailOf = async (userId: string) =>
    Object.fromEntries(
      Object.entries((await getPreferences(userId, asUser(userId))).json().preferences).map(
        ([type, channels]) => [type, (channels as { email: boolean }).email],
      ),
    )

  it("when a good token is posted (RFC 8058), then e-mail of its type is off for its user only, and the user's other types and other users stay on", async () => {
    const userId = randomUUID()
    const other = randomUUID()
    const token = tokens().sign({ userId, type: 'shipment_created', address: 'ada@example.com' })
    const answer = await unsubscribe(token)
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({ unsubscribed: true, type: 'shipment_created' })
    const email = await emailOf(userId)
    expect(email.shipment_created).toBe(false)
    expect(Object.entries(email).filter(([, value]) => value === false)).toEqual([
      ['shipment_created', false],
    ])
    expect(Object.values(await emailOf(other)).every(Boolean)).toBe(true)
    // its other channels stay on; posting again is the same answer
    expect((await getPreferences(userId, asUser(userId))).json().preferences.shipment_created).toEqual({
      ...on,
      email: false,
    })
    expect((await unsubscribe(token)).statusCode).toBe(200)
    // through the /api alias, and as multipart/form-data
    const multipart = await notification.app.inject({
      method: 'POST',
      url: `/api/notifications/unsubscribe?token=${encodeURIComponent(tokens().sign({ userId, type: 'welcome', address: 'ada@example.com' }))}`,
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      payload: '--x\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--x--\r\n',
    })
    expect(multipart.statusCode).toBe(200)
    expect((await emailOf(userId)).welcome).toBe(false)
  })

  it('when the token is tampered with, names another user, or was signed with another secret, then 400 and nothing changes', async () => {
    const userId = randomUUID()
    const token = tokens().sign({ userId, type: 'order_placed', address: 'ada@example.com' })
    const [, signature] = token.split('.')
    const otherUser = `${Buffer.from(JSON.stringify([randomUUID(), 'order_placed', 'ada@example.com'])).toString('base64url')}.${signature}`
    const foreign = unsubscribeTokens('another-secret-of-at-least-32-characters!').sign({
      userId,
      type: 'order_placed',
      address: 'ada@example.com',
    })
    const unknownType = tokens().sign({ userId, type: 'password_reset', address: 'ada@example.com' })
    for (const bad of [`${token}x`, otherUser, foreign, unknownType, 'not-a-token']) {
      expectErrorEnvelope(await unsubscribe(bad), 400, 'BAD_REQUEST')
    }
    expect(Object.values(await emailOf(userId)).every(Boolean)).toBe(true)
  })

  it('when the link is opened (GET), then a page asks to confirm and nothing changes; a bad token is 400', async () => {
    const userId = randomUUID()
    const token = tokens().sign({ userId, type: 'return_requested', address: 'ada@example.com' })
    const page = await notification.app.inject({
      method: 'GET',
      url: `/api/v1/notifications/unsubscribe?token=${encodeURIComponent(token)}`,
    })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.body).toContain('return requested')
    expect(page.body).toContain('<form method="post"')
    expect(Object.values(await emailOf(userId)).every(Boolean)).toBe(true)
    expectErrorEnvelope(
      await notification.app.inject({
        method: 'GET',
        url: '/api/v1/notifications/unsubscribe?token=abc.def',
      }),
      400,
      'BAD_REQUEST',
    )
  })

  it('when the body is not the one-click body, then nothing changes', async () => {
    const userId = randomUUID()
    const token = tokens().sign({ userId, type: 'order_placed', address: 'ada@example.com' })
    expect((await unsubscribe(token, 'List-Unsubscribe=Maybe')).statusCode).toBe(422)
    expect(Object.values(await emailOf(userId)).every(Boolean)).toBe(true)
  })
})
