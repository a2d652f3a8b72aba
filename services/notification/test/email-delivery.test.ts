// The e-mail channel without an SMTP server (its port closed): a notification that reaches its user writes one mail
// row in the consumer's transaction, a redelivery none, a pending one when its order.placed resolves it; the address
// comes from order.placed's customerEmail and auth's user events; a send that fails is retried later, and dead after
// the last attempt (counted by meridian_notification_emails_total); a removed user's mails are given up; a round
// removes the rows of mails finished more than MAIL_RETENTION_DAYS (30 by default) ago. What arrives at a real SMTP
// server is email-mailpit.test.ts'.
import { randomUUID } from 'node:crypto'
import { createEvent } from '@meridian/events'
import { eventually, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEmailDeliveriesRepository } from '../src/data/email-deliveries-repository.ts'
import { createUserAddressesRepository } from '../src/data/user-addresses-repository.ts'
import { buildNotificationTestApp, type NotificationTestApp } from './support/app.ts'
import { closedPort, deliveriesOf, handle } from './support/email.ts'
import { orderPlaced, paymentFailed, userRegistered } from './support/notifications.ts'

let notification: NotificationTestApp

beforeAll(async () => {
  notification = await buildNotificationTestApp({
    ...tokenEnv,
    SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`,
    SMTP_USERNAME: 'meridian',
    SMTP_PASSWORD: 'smtp-password-never-logged',
    MAIL_SEND_TIMEOUT_MS: '2000',
    // rounds are run by the tests: the clock's first would come after the file is done
    EMAIL_SEND_INTERVAL_MS: '600000',
    EMAIL_MAX_ATTEMPTS: '3',
    EMAIL_RETRY_BASE_MS: '50',
    EMAIL_RETRY_MAX_MS: '100',
  })
})

afterAll(async () => {
  await notification?.close()
})

const addressOf = (userId: string) =>
  notification.sql<{ email: string | null; version: number }[]>`
    select email, version from user_addresses where user_id = ${userId}`

describe('mail rows', () => {
  it("when two transactions apply addresses their rows already hold, in opposite orders, then neither waits on the other (a batch's order.placed locked its customers' rows, and two batches deadlocked)", async () => {
    const addresses = createUserAddressesRepository(notification.sql)
    const [first, second] = [randomUUID(), randomUUID()]
    await addresses.apply(first, 'first@example.com', 1)
    await addresses.apply(second, 'second@example.com', 1)
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    // one batch: the first customer's order.placed, then it stays open
    let applied = () => {}
    const firstApplied = new Promise<void>((resolve) => {
      applied = resolve
    })
    const open = notification.sql.begin(async (tx) => {
      await addresses.apply(first, 'first@example.com', 0, tx)
      applied()
      await held
      await addresses.apply(second, 'second@example.com', 0, tx)
    })
    await firstApplied
    try {
      // the other batch, the customers in the other order: it would wait on the open one's lock (5 s, then an error)
      await notification.sql.begin(async (tx) => {
        await tx`set local lock_timeout = '5s'`
        expect(await addresses.apply(second, 'second@example.com', 0, tx)).toBe(false)
        expect(await addresses.apply(first, 'first@example.com', 0, tx)).toBe(false)
      })
    } finally {
      release()
      await open
    }
    // a newer version still replaces the address
    expect(await addresses.apply(first, 'new@example.com', 2)).toBe(true)
    expect(await addressOf(first)).toEqual([{ email: 'new@example.com', version: 2 }])
  })

  it('when order.placed comes twice (the inbox forgot it), then one notification and one pending mail row, and the address from customerEmail', async () => {
    const customerId = randomUUID()
    const placed = orderPlaced({ customerId, customerEmail: 'ada@example.com' })
    await handle(notification, placed)
    await handle(notification, placed)
    const rows = await deliveriesOf(notification, customerId)
    expect(rows.map(({ status, attempts }) => ({ status, attempts }))).toEqual([
      { status: 'pending', attempts: 0 },
    ])
    expect(await addressOf(customerId)).toEqual([{ email: 'ada@example.com', version: 0 }])
  })

  it("when an order's event comes before its order.placed, then its mail row is written once the customer is known", async () => {
    const placed = orderPlaced()
    const { orderId, customerId } = placed.data
    await handle(notification, paymentFailed(orderId))
    expect(
      await notification.sql`select 1 from email_deliveries d join notifications n on n.id = d.notification_id where n.order_id = ${orderId}`,
    ).toHaveLength(0)
    await handle(notification, placed)
    expect(await deliveriesOf(notification, customerId)).toHaveLength(2)
  })

  it("when auth's user events come, then the newest address wins, an older event changes nothing, and a removal forgets it", async () => {
    const registered = userRegistered()
    const { userId } = registered.data
    await handle(notification, registered)
    expect(await addressOf(userId)).toEqual([{ email: registered.data.email, version: 1 }])
    const changed = (version: number, email: string) =>
      createEvent(
        'user.profile_changed',
        { userId, email, name: 'Ada', role: 'user', status: 'active', version },
        { source: 'auth' },
      )
    await handle(notification, changed(3, 'new@example.com'))
    await handle(notification, changed(2, 'older@example.com'))
    expect(await addressOf(userId)).toEqual([{ email: 'new@example.com', version: 3 }])
    // order.placed's customerEmail never replaces what auth said
    await handle(notification, orderPlaced({ customerId: userId, customerEmail: 'order@example.com' }))
    expect(await addressOf(userId)).toEqual([{ email: 'new@example.com', version: 3 }])

    await handle(notification, createEvent('user.removed', { userId }, { source: 'auth' }))
    expect(await addressOf(userId)).toEqual([{ email: null, version: 3 }])
    expect(
      (await deliveriesOf(notification, userId)).map(({ status, lastError }) => ({ status, lastError })),
    ).toEqual([
      { status: 'dead', lastError: 'the user was removed' },
      { status: 'dead', lastError: 'the user was removed' },
    ])
    await handle(notification, changed(4, 'back@example.com'))
    expect(await addressOf(userId)).toEqual([{ email: null, version: 3 }])
  })
})

describe('the sender while the SMTP server is down', () => {
  it('when a send fails, then the mail is due again later; after the last attempt it is dead, counted, and no secret is stored or logged', async () => {
    const registered = userRegistered()
    const { userId } = registered.data
    await handle(notification, registered)

    const first = await notification.emailSender.round()
    expect(first.sent).toBe(0)
    const [afterFirst] = await deliveriesOf(notification, userId)
    expect(afterFirst).toMatchObject({ status: 'pending', attempts: 1 })
    expect(afterFirst?.lastError).toMatch(/^E[A-Z]+: /)
    expect(afterFirst?.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() - 1000)

    await eventually('the mail is dead after its last attempt', async () => {
      await notification.emailSender.round()
      return (await deliveriesOf(notification, userId))[0]?.status === 'dead'
    })
    const [dead] = await deliveriesOf(notification, userId)
    expect(dead?.attempts).toBe(3)
    expect(dead?.lastError).not.toContain('smtp-password-never-logged')
    // dead is final: later rounds leave it
    await notification.emailSender.round()
    expect((await deliveriesOf(notification, userId))[0]?.attempts).toBe(3)

    const metrics = await notification.app.inject({ method: 'GET', url: '/metrics?format=prometheus' })
    expect(metrics.body).toMatch(/meridian_notification_emails_total\{[^}]*outcome="dead"[^}]*\} [1-9]/)
    expect(metrics.body).toMatch(/meridian_notification_emails_total\{[^}]*outcome="retried"[^}]*\} [1-9]/)
    expect(JSON.stringify(notification.logs)).not.toContain('smtp-password-never-logged')
  })

  it('when two senders take due mails at once, then each mail is taken by one of them only, and leased from the other', async () => {
    const registered = userRegistered()
    await handle(notification, registered)
    const deliveries = createEmailDeliveriesRepository(notification.sql)
    const taken = await Promise.all([deliveries.takeDue(1000, 60_000), deliveries.takeDue(1000, 60_000)])
    const mine = taken.flat().filter((due) => due.userId === registered.data.userId)
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({
      type: 'welcome',
      attempts: 1,
      address: registered.data.email,
      removed: false,
    })
    expect(
      (await deliveries.takeDue(1000, 60_000)).some((due) => due.userId === registered.data.userId),
    ).toBe(false)
  })
})

describe('mail rows past their retention', () => {
  it('when a sent and a dead mail were finished more than MAIL_RETENTION_DAYS ago, then a round removes their rows (not their notifications), and a newer finished one and a pending one stay', async () => {
    const users = [userRegistered(), userRegistered(), userRegistered(), userRegistered()]
    for (const registered of users) await handle(notification, registered)
    const [oldSent, oldDead, newer, pending] = users.map((registered) => registered.data.userId)
    /** the user's welcome mail dated: finished (sent or dead) `days` ago, or pending, written `days` ago and not due */
    const date = (userId: string | undefined, status: 'pending' | 'sent' | 'dead', days: number) =>
      notification.sql`
        update email_deliveries
        set status = ${status}, created_at = now() - ${days} * interval '1 day',
          sent_at = case when ${status}::text = 'sent' then now() - ${days} * interval '1 day' end,
          finished_at = case when ${status}::text <> 'pending' then now() - ${days} * interval '1 day' end,
          next_attempt_at = now() + interval '1 day'
        where user_id = ${userId ?? ''}`
    await date(oldSent, 'sent', 31)
    await date(oldDead, 'dead', 31)
    await date(newer, 'sent', 29)
    await date(pending, 'pending', 40)

    const round = await notification.emailSender.round()
    expect(round.removed).toBeGreaterThanOrEqual(2)
    const left = await notification.sql<{ userId: string }[]>`
      select d.user_id from email_deliveries d where d.user_id in ${notification.sql(users.map((u) => u.data.userId))}`
    expect(left.map((row) => row.userId).sort()).toEqual([newer, pending].sort())
    const notifications = await notification.sql`
      select 1 from notifications where user_id in ${notification.sql(users.map((u) => u.data.userId))}`
    expect(notifications).toHaveLength(4)
  })
})
