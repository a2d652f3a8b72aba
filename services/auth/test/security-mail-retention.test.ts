// Security mails are kept MAIL_RETENTION_DAYS (here 10) after they are finished: the sender's rounds, on the app's
// clock, remove a sent or dead mail finished longer ago, and keep one finished more recently and one still pending
// however old. The rows are written and dated with SQL; nothing is due, so nothing is sent.
import { randomUUID } from 'node:crypto'
import { eventually } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { createTestUser } from './identities.ts'

let auth: AuthTestApp
beforeAll(async () => {
  auth = await buildAuthTestApp({ EMAIL_SEND_INTERVAL_MS: '100', MAIL_RETENTION_DAYS: '10' })
})
afterAll(async () => {
  await auth?.close()
})

/** A security mail of the user's, in `status`, finished (sent or dead) `finishedDaysAgo` days ago when it is. */
async function storedMail(userId: string, status: 'pending' | 'sent' | 'dead', finishedDaysAgo: number) {
  const id = randomUUID()
  const daysAgo = `${finishedDaysAgo} days`
  await auth.sql`
    insert into security_mails (id, user_id, template, recipient, data, status, attempts, next_attempt_at, created_at,
      sent_at, finished_at)
    values (${id}, ${userId}, 'password_changed', 'kept.out@example.com', '{}', ${status}, 1,
      now() + interval '1 day', now() - ${daysAgo}::interval - interval '1 hour',
      case when ${status}::text = 'sent' then now() - ${daysAgo}::interval end,
      case when ${status}::text <> 'pending' then now() - ${daysAgo}::interval end)`
  return id
}

describe('security mails past their retention', () => {
  it('when a sent and a dead mail were finished longer ago than MAIL_RETENTION_DAYS, then a round removes them, and a newer finished one and a pending one stay', async () => {
    const user = await createTestUser(auth, { email: `retention.${randomUUID().slice(0, 12)}@example.com` })
    const oldSent = await storedMail(user.id, 'sent', 11)
    const oldDead = await storedMail(user.id, 'dead', 11)
    const newer = await storedMail(user.id, 'sent', 9)
    const pending = await storedMail(user.id, 'pending', 40)
    const left = async () =>
      (
        await auth.sql<{ id: string }[]>`select id from security_mails where user_id = ${user.id} order by id`
      ).map((row) => row.id)
    await eventually('the mails past their retention are removed', async () => {
      const ids = await left()
      return !ids.includes(oldSent) && !ids.includes(oldDead)
    })
    expect(await left()).toEqual([newer, pending].sort())
  })
})
