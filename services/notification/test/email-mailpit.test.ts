// The e-mail channel against a real SMTP server, the development Mailpit (testkit's mailpitEngine(): the one
// ./scripts/infra up runs; the file fails, never skips, without it): one mail per notification even when the consumer gets its event twice, with the Message-ID that
// follows from the notification and RFC 8058's List-Unsubscribe; the SMTP server down (a closed port), then up: the
// mail goes out once, nothing lost; and the unsubscribe link of a mail as it arrived turns that type's e-mail off.
import { randomUUID } from 'node:crypto'
import { messageIdFor } from '@meridian/mail'
import { eventually, type MailpitEngine, mailpitEngine, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { emailIdempotencyKey } from '../src/domain/email-sender.ts'
import { buildNotificationTestApp, type NotificationTestApp } from './support/app.ts'
import { closedPort, deliveriesOf, handle, relay } from './support/email.ts'
import { messagesTo, unsubscribeHeadersOf } from './support/mailpit.ts'
import { orderPlaced } from './support/notifications.ts'

let mailpit: MailpitEngine

beforeAll(async () => {
  mailpit = await mailpitEngine()
})

const testEnv = (smtpUrl: string) => ({
  ...tokenEnv,
  SMTP_URL: smtpUrl,
  MAIL_FROM: 'Meridian Test <no-reply@meridian.test>',
  EMAIL_SEND_INTERVAL_MS: '600000',
  EMAIL_RETRY_BASE_MS: '50',
  EMAIL_RETRY_MAX_MS: '200',
  MAIL_SEND_TIMEOUT_MS: '5000',
})

/** The Message-ID Mailpit shows (without angle brackets) for a notification's mail. */
const mailpitMessageId = (notificationId: string) =>
  messageIdFor(emailIdempotencyKey(notificationId), 'no-reply@meridian.test').slice(1, -1)

const uniqueAddress = () => `customer.${randomUUID().slice(0, 12)}@example.com`

describe('e-mail through Mailpit', () => {
  let notification: NotificationTestApp

  beforeAll(async () => {
    notification = await buildNotificationTestApp(testEnv(mailpit.smtpUrl))
  })

  afterAll(async () => {
    await notification?.close()
  })

  it('when order.placed is consumed twice, then exactly one mail arrives, with its Message-ID, lines and List-Unsubscribe', async () => {
    const address = uniqueAddress()
    const placed = orderPlaced({
      customerEmail: address,
      items: [{ productId: randomUUID(), quantity: 2, price: 19.99, name: '<script>alert(1)</script>' }],
      total: 39.98,
    })
    await handle(notification, placed)
    await handle(notification, placed)
    await eventually('the mail is sent', async () => {
      await notification.emailSender.round()
      return (await deliveriesOf(notification, placed.data.customerId))[0]?.status === 'sent'
    })
    await notification.emailSender.round()
    const [row] = await deliveriesOf(notification, placed.data.customerId)
    const arrived = await messagesTo(mailpit.mailbox, address)
    expect(arrived).toHaveLength(1)
    const [summary] = arrived
    expect(summary?.messageId).toBe(mailpitMessageId(row?.notificationId ?? ''))
    expect(summary?.subject).toBe(`Order ${placed.data.orderId} placed`)
    const message = await mailpit.mailbox.message(summary?.id ?? '')
    expect(message.text).toContain('2 × <script>alert(1)</script> at $19.99: $39.98')
    expect(message.html).not.toContain('<script>')
    const unsubscribe = unsubscribeHeadersOf(message)
    expect(unsubscribe.post).toBe('List-Unsubscribe=One-Click')
    expect(unsubscribe.links[0]).toMatch(/\/api\/v1\/notifications\/unsubscribe\?token=/)
    await mailpit.mailbox.remove([message.id])
  })

  it("when the mail's List-Unsubscribe link is posted, then e-mail of its type is off for its user", async () => {
    const address = uniqueAddress()
    const placed = orderPlaced({ customerEmail: address })
    await handle(notification, placed)
    await eventually('the mail arrives', async () => {
      await notification.emailSender.round()
      return (await messagesTo(mailpit.mailbox, address)).length === 1
    })
    const [summary] = await messagesTo(mailpit.mailbox, address)
    const message = await mailpit.mailbox.message(summary?.id ?? '')
    const link = new URL(unsubscribeHeadersOf(message).links[0] ?? '')
    const answer = await notification.app.inject({
      method: 'POST',
      url: `${link.pathname}${link.search}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    })
    expect(answer.json()).toEqual({ unsubscribed: true, type: 'order_placed' })
    const [preference] = await notification.sql<{ email: boolean }[]>`
      select email from notification_preferences where user_id = ${placed.data.customerId} and type = 'order_placed'`
    expect(preference?.email).toBe(false)
    await mailpit.mailbox.remove([message.id])
  })
})

describe('e-mail while the SMTP server is down, then up', () => {
  let notification: NotificationTestApp
  let port: number
  let stopRelay: (() => Promise<void>) | undefined

  beforeAll(async () => {
    port = await closedPort()
    notification = await buildNotificationTestApp(testEnv(`smtp://127.0.0.1:${port}`))
  })

  afterAll(async () => {
    await stopRelay?.()
    await notification?.close()
  })

  it('when sends fail while nothing listens, then the mail waits; once the server is back it goes out once', async () => {
    const address = uniqueAddress()
    const placed = orderPlaced({ customerEmail: address })
    await handle(notification, placed)
    await notification.emailSender.round()
    const [failed] = await deliveriesOf(notification, placed.data.customerId)
    expect(failed).toMatchObject({ status: 'pending', attempts: 1 })
    expect(failed?.lastError).not.toBeNull()

    const target = new URL(mailpit.smtpUrl)
    stopRelay = await relay(port, { host: target.hostname, port: Number(target.port || 25) })
    await eventually('the mail is sent once the server is back', async () => {
      await notification.emailSender.round()
      return (await deliveriesOf(notification, placed.data.customerId))[0]?.status === 'sent'
    })
    await notification.emailSender.round()
    const arrived = await messagesTo(mailpit.mailbox, address)
    expect(arrived).toHaveLength(1)
    await mailpit.mailbox.remove(arrived.map((each) => each.id))
  })
})
