// The SMTP server down for 30 s under a steady load of mail (issue 44, point 2): order.placed events applied as the
// consumer applies them, a few a second for a minute, each making a notification and its mail row, while the sender
// runs on the app's clock as in production and sends to a Mailpit of this file's own (the cache's binary on free
// loopback ports, never the shared one). A quarter of the way in, that Mailpit is stopped (by its pid) for
// `outageMs`, then started again on the same ports with the same messages. Once every mail is `sent`, the Mailpit is
// counted: each notification's mail arrived exactly once, by its Message-ID and to its recipient — 0 lost, 0
// duplicated — and the counts are printed. Nothing here measures time: the load and the outage are paced by the clock,
// and every wait is for a condition.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { layoutFromEnv } from '@meridian/infra'
import { type Mailpit, startMailpit } from '@meridian/infra/mailpit'
import { messageIdFor } from '@meridian/mail'
import { eventually, mailbox, scaledMs, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { emailIdempotencyKey } from '../src/domain/email-sender.ts'
import { buildNotificationTestApp, type NotificationTestApp } from './support/app.ts'
import { handle } from './support/email.ts'
import { orderPlaced } from './support/notifications.ts'

/** How long the SMTP server is down: the one setting of the fault. */
const outageMs = 30_000
/**
 * How long notifications are made, and how many a second: the outage sits inside, a quarter of the way in. Keep the
 * product under 500: Mailpit keeps only its newest 500 messages, and the count reads them all.
 */
const load = { durationMs: 60_000, perSecond: 4 }
const outageStartsAfterMs = load.durationMs / 4

const testEnv = (smtpUrl: string) => ({
  ...tokenEnv,
  SMTP_URL: smtpUrl,
  MAIL_FROM: 'Meridian Test <no-reply@meridian.test>',
  // the sender on its own clock, as in production (only faster)
  EMAIL_SEND_INTERVAL_MS: '250',
  // No mail may go dead during the outage: failed sends wait 0.5 s, doubling up to 2 s, so 30 s down costs a mail at
  // most about 17 attempts, and 100 (the most allowed) outlast an outage of over three minutes.
  EMAIL_RETRY_BASE_MS: '500',
  EMAIL_RETRY_MAX_MS: '2000',
  EMAIL_MAX_ATTEMPTS: '100',
  MAIL_SEND_TIMEOUT_MS: '5000',
})

interface Row {
  notificationId: string
  status: 'pending' | 'sent' | 'dead'
  attempts: number
  address: string
}

const rowsOf = (notification: NotificationTestApp) =>
  notification.sql<Row[]>`
    select d.notification_id, d.status, d.attempts, a.email as address
    from email_deliveries d join user_addresses a on a.user_id = d.user_id`

/** order.placed events, `perSecond` a second for `durationMs`, each to an address of its own; resolves with their count. */
async function driveLoad(notification: NotificationTestApp): Promise<number> {
  const started = Date.now()
  let made = 0
  while (Date.now() - started < load.durationMs) {
    const placed = orderPlaced({ customerEmail: `outage.${made}.${started}@example.com` })
    await handle(notification, placed)
    made += 1
    const nextAt = started + (made * 1000) / load.perSecond
    await sleep(Math.max(0, nextAt - Date.now()))
  }
  return made
}

/** Stops `mailpit` after outageStartsAfterMs, keeps it down for outageMs, starts it again on the same ports. */
async function outage(mailpit: Mailpit, dataDir: string): Promise<Mailpit> {
  await sleep(outageStartsAfterMs)
  await mailpit.stop()
  await sleep(outageMs)
  return startMailpit(layoutFromEnv(), { ports: { smtp: mailpit.smtpPort, http: mailpit.httpPort }, dataDir })
}

/** What the Mailpit holds against the rows: mails lost, mails beyond one per notification, and misaddressed ones. */
async function countMail(url: string, rows: Row[]) {
  const held = await mailbox(url).messages(1000)
  const byMessageId = new Map<string, string[]>()
  for (const mail of held) {
    const to = mail.to.map((each) => each.address)
    byMessageId.set(mail.messageId, [...(byMessageId.get(mail.messageId) ?? []), ...to])
  }
  const expected = new Map(
    rows.map((row) => [
      messageIdFor(emailIdempotencyKey(row.notificationId), 'no-reply@meridian.test').slice(1, -1),
      row.address,
    ]),
  )
  const lost = [...expected.keys()].filter((id) => !byMessageId.has(id)).length
  const misaddressed = [...expected].filter(([id, address]) =>
    (byMessageId.get(id) ?? [address]).some((to) => to !== address),
  ).length
  return {
    notifications: rows.length,
    arrived: held.length,
    lost,
    duplicated: held.length - byMessageId.size,
    misaddressed,
  }
}

describe('e-mail while the SMTP server is down for a while under load', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meridian-outage-mailpit-'))
  let mailpit: Mailpit
  let notification: NotificationTestApp

  beforeAll(async () => {
    mailpit = await startMailpit(layoutFromEnv(), { dataDir })
    notification = await buildNotificationTestApp(testEnv(mailpit.smtpUrl))
  })

  afterAll(async () => {
    await notification?.close()
    await mailpit?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it(
    'when Mailpit is stopped for 30 s mid-load and started again, then every notification is mailed exactly once: 0 lost, 0 duplicated',
    async () => {
      const [made, restarted] = await Promise.all([driveLoad(notification), outage(mailpit, dataDir)])
      mailpit = restarted
      await eventually(
        'every mail is sent',
        async () => {
          const rows = await rowsOf(notification)
          return rows.length === made && rows.every((row) => row.status === 'sent')
        },
        scaledMs(180_000),
        500,
      )
      const rows = await rowsOf(notification)
      const retried = rows.filter((row) => row.attempts > 1).length
      const counts = { ...(await countMail(mailpit.url, rows)), retried, outageMs }
      process.stdout.write(`SMTP outage: ${JSON.stringify(counts)}\n`)
      // the outage was felt: mails made while Mailpit was down failed first
      expect(retried).toBeGreaterThan(0)
      expect(counts).toMatchObject({
        notifications: made,
        arrived: made,
        lost: 0,
        duplicated: 0,
        misaddressed: 0,
      })
    },
    scaledMs(300_000),
  )
})
