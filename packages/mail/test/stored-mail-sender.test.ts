// The stored-mail sender's round (what auth's security mails and notification's e-mails share) over an in-memory
// table of due rows, with the real SMTP transport: the development Mailpit (testkit's mailpitEngine(); the file fails,
// never skips, without it) receives what is sent and refuses for good an address too long for it (a 5xx to the
// envelope); a closed port is the SMTP server down. Sent; retried with the backoff; dead after the last attempt; dead
// at once for a permanent refusal, data that does not render and what the caller says can never be sent; batches
// until fewer than a batch are left; each outcome counted; no address in a log line; finished mails past their
// retention removed in batches.
import { randomUUID } from 'node:crypto'
import { closedPort, type MailpitEngine, mailpitEngine } from '@meridian/testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  backoffMs,
  composeMail,
  createMailer,
  createStoredMailSender,
  type Mailer,
  messageIdFor,
  renderTemplate,
  type StoredMailOutcome,
  type StoredMailSettings,
  type StoredMails,
  type Unsendable,
} from '../src/index.ts'

interface Row {
  id: string
  to: string
  attempts: number
  status: 'pending' | 'sent' | 'dead'
  dueAt: number
  /** when it was sent or given up (ms), while finished */
  finishedAt?: number
  lastError: string | null
  messageId: string | null
  /** the test's: the row's data does not render */
  broken?: boolean
  /** the test's: what the caller says of the row before it is composed */
  refused?: Unsendable
}

/** A table of stored mails in memory, as a service's statements keep one, and what the sender asked of it. */
function table(rows: Row[]) {
  const taken: number[] = []
  const removedAt: number[] = []
  const mails: StoredMails<Row, { housekept: number }> = {
    kind: 'test mail',
    async takeDue(limit, leaseMs) {
      const due = rows.filter((row) => row.status === 'pending' && row.dueAt <= Date.now()).slice(0, limit)
      for (const row of due) {
        row.attempts += 1
        row.dueAt = Date.now() + leaseMs
      }
      taken.push(due.length)
      return due.map((row) => ({ ...row }))
    },
    compose(due) {
      if (due.broken) throw new Error('the data does not fit the template')
      const rendered = renderTemplate('password_changed', { changedAt: '2026-01-02T03:04:05.000Z' })
      return composeMail({
        from: 'Meridian Test <no-reply@meridian.test>',
        to: due.to,
        rendered,
        idempotencyKey: due.id,
      })
    },
    unsendable: (due) => due.refused,
    async markSent(due, messageId) {
      Object.assign(rowOf(due), { status: 'sent', messageId, lastError: null, finishedAt: Date.now() })
    },
    async markFailed(due, error, retryAt) {
      const row = rowOf(due)
      Object.assign(row, { status: retryAt === null ? 'dead' : 'pending', lastError: error })
      if (retryAt === null) row.finishedAt = Date.now()
      else row.dueAt = retryAt.getTime()
    },
    async removeFinished(retentionDays, limit) {
      const before = Date.now() - retentionDays * day
      const gone = rows
        .filter((row) => row.status !== 'pending' && (row.finishedAt ?? Date.now()) < before)
        .slice(0, limit)
      for (const row of gone) rows.splice(rows.indexOf(row), 1)
      removedAt.push(gone.length)
      return gone.length
    },
    logDetails: (due) => ({ mailId: due.id }),
    afterRound: async () => ({ housekept: 1 }),
  }
  const rowOf = (due: Row): Row => rows.find((row) => row.id === due.id) ?? fail(`no row ${due.id}`)
  return { mails, taken, removedAt }
}

const day = 86_400_000

const fail = (message: string): never => {
  throw new Error(message)
}

const uniqueAddress = () => `stored.${randomUUID().slice(0, 12)}@example.com`

const row = (to = uniqueAddress(), extra: Partial<Row> = {}): Row => ({
  id: `test-mail:${randomUUID()}`,
  to,
  attempts: 0,
  status: 'pending',
  dueAt: 0,
  lastError: null,
  messageId: null,
  ...extra,
})

const settings: StoredMailSettings = {
  batchSize: 10,
  leaseMs: 60_000,
  maxAttempts: 3,
  retryBaseMs: 1000,
  retryMaxMs: 5000,
  retentionDays: 30,
  removeBatchSize: 100,
}

let mailpit: MailpitEngine
let up: Mailer
let down: Mailer
const sentTo: string[] = []

beforeAll(async () => {
  mailpit = await mailpitEngine()
  up = createMailer({ SMTP_URL: mailpit.smtpUrl, MAIL_SEND_TIMEOUT_MS: 5000, MAIL_POOL_MAX_CONNECTIONS: 2 })
  down = createMailer({
    SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`,
    MAIL_SEND_TIMEOUT_MS: 2000,
    MAIL_POOL_MAX_CONNECTIONS: 1,
  })
})
afterAll(() => {
  up?.close()
  down?.close()
})
// what a test mailed is removed from the shared Mailpit
afterEach(async () => {
  for (const address of sentTo.splice(0)) {
    const found = await mailpit.mailbox.search(`to:"${address}"`)
    await mailpit.mailbox.remove(found.map((summary) => summary.id))
  }
})

/** A sender over `rows` through `mailer`, and what it counted and logged. */
function senderOver(rows: Row[], mailer: Mailer, overrides: Partial<StoredMailSettings> = {}) {
  const { mails, taken, removedAt } = table(rows)
  const counted: StoredMailOutcome[] = []
  const logs: { level: 'warn' | 'error'; details: Record<string, unknown>; message: string }[] = []
  const sender = createStoredMailSender({
    mails,
    mailer,
    settings: { ...settings, ...overrides },
    count: (outcome) => counted.push(outcome),
    logger: {
      warn: (details, message) => logs.push({ level: 'warn', details, message }),
      error: (details, message) => logs.push({ level: 'error', details, message }),
    },
  })
  return { sender, taken, removedAt, counted, logs }
}

describe('the stored-mail round', () => {
  it('when a due mail is sent, then it arrives with its Message-ID, is marked sent and counted, and housekeeping runs', async () => {
    const mail = row()
    sentTo.push(mail.to)
    const { sender, counted, logs } = senderOver([mail], up)
    expect(await sender.round()).toEqual({ sent: 1, retried: 0, dead: 0, removed: 0, housekept: 1 })
    expect(mail).toMatchObject({ status: 'sent', attempts: 1, lastError: null })
    const arrived = await mailpit.mailbox.waitForMessage({ to: mail.to })
    expect(`<${arrived.messageId}>`).toBe(messageIdFor(mail.id, 'no-reply@meridian.test'))
    expect(mail.messageId).toBe(`<${arrived.messageId}>`)
    expect(counted).toEqual(['sent'])
    expect(logs).toEqual([])
  })

  it('when sends fail (the SMTP server down), then the mail is due again after the backoff, doubled, and dead after the last attempt', async () => {
    const mail = row()
    const { sender, counted, logs } = senderOver([mail], down)
    for (const attempts of [1, 2]) {
      const before = Date.now()
      expect(await sender.round()).toMatchObject({ sent: 0, retried: 1, dead: 0 })
      const wait = backoffMs(attempts, settings.retryBaseMs, settings.retryMaxMs)
      expect(mail).toMatchObject({ status: 'pending', attempts })
      expect(mail.dueAt).toBeGreaterThanOrEqual(before + wait)
      expect(mail.dueAt).toBeLessThanOrEqual(Date.now() + wait)
      expect(mail.lastError).toMatch(/^(ECONNECTION|ESOCKET): /)
      // due again only when its time comes
      expect(await sender.round()).toMatchObject({ sent: 0, retried: 0, dead: 0 })
      mail.dueAt = 0
    }
    expect(await sender.round()).toMatchObject({ sent: 0, retried: 0, dead: 1 })
    expect(mail).toMatchObject({ status: 'dead', attempts: 3 })
    expect(counted).toEqual(['retried', 'retried', 'dead'])
    expect(logs.map(({ level, message }) => `${level} ${message}`)).toEqual([
      'warn test mail: failed; retried later',
      'warn test mail: failed; retried later',
      'error test mail: given up (dead)',
    ])
    expect(logs[0]?.details).toMatchObject({ mailId: mail.id, attempts: 1, error: mail.lastError })
    expect(typeof logs[0]?.details.retryAt).toBe('string')
    expect(JSON.stringify(logs)).not.toContain(mail.to)
  })

  it('when the server refuses the recipient for good (a 5xx to the envelope), then the mail is dead at its first attempt', async () => {
    // Mailpit refuses an address over 1024 characters: 500 The address is too long
    const mail = row(`${'x'.repeat(1100)}@example.com`)
    const { sender, logs } = senderOver([mail], up)
    expect(await sender.round()).toMatchObject({ sent: 0, retried: 0, dead: 1 })
    expect(mail).toMatchObject({ status: 'dead', attempts: 1 })
    expect(mail.lastError).toMatch(/^EENVELOPE: .*too long/)
    expect(logs).toHaveLength(1)
    expect(logs[0]).toMatchObject({ level: 'error', message: 'test mail: given up (dead)' })
    expect(JSON.stringify(logs)).not.toContain('xxxxxxxx')
  })

  it("when a mail's data does not render, then it is dead at once as not rendered, and nothing is sent", async () => {
    const mail = row(uniqueAddress(), { broken: true })
    const { sender } = senderOver([mail], up)
    expect(await sender.round()).toMatchObject({ sent: 0, retried: 0, dead: 1 })
    expect(mail).toMatchObject({
      status: 'dead',
      attempts: 1,
      lastError: 'not rendered: the data does not fit the template',
    })
    expect(await mailpit.mailbox.search(`to:"${mail.to}"`)).toEqual([])
  })

  it('when the caller says a mail cannot be sent, then it is dead at once if that is permanent, else retried', async () => {
    const never = row(uniqueAddress(), { refused: { error: 'the user was removed', permanent: true } })
    const notYet = row(uniqueAddress(), { refused: { error: 'no address yet', permanent: false } })
    const { sender } = senderOver([never, notYet], up)
    expect(await sender.round()).toMatchObject({ sent: 0, retried: 1, dead: 1 })
    expect(never).toMatchObject({ status: 'dead', lastError: 'the user was removed' })
    expect(notYet).toMatchObject({ status: 'pending', lastError: 'no address yet' })
    expect(notYet.dueAt).toBeGreaterThan(Date.now())
  })

  it('when more mails are due than a batch holds, then batches are taken until one comes back short, or the most batches are taken', async () => {
    const rows = Array.from({ length: 5 }, () => row())
    sentTo.push(...rows.map((each) => each.to))
    const { sender, taken, counted } = senderOver(rows, up, { batchSize: 2 })
    expect(await sender.round()).toMatchObject({ sent: 5, retried: 0, dead: 0 })
    expect(taken).toEqual([2, 2, 1])
    expect(counted).toEqual(['sent', 'sent', 'sent', 'sent', 'sent'])
    expect(rows.every((each) => each.status === 'sent')).toBe(true)

    const four = Array.from({ length: 4 }, () => row(uniqueAddress(), { broken: true }))
    const exact = senderOver(four, up, { batchSize: 2 })
    expect(await exact.sender.round()).toMatchObject({ dead: 4 })
    // a full batch may not be the last: one more is asked for
    expect(exact.taken).toEqual([2, 2, 0])

    const many = Array.from({ length: 7 }, () => row(uniqueAddress(), { broken: true }))
    const bounded = senderOver(many, up, { batchSize: 2 })
    expect(await bounded.sender.round(2)).toMatchObject({ dead: 4 })
    expect(bounded.taken).toEqual([2, 2])
    expect(many.filter((each) => each.status === 'pending')).toHaveLength(3)
  })

  it('when mails finished longer ago than the retention, then the round removes them in batches, and keeps newer and pending ones', async () => {
    const longAgo = Date.now() - 31 * day
    const old = Array.from({ length: 5 }, (_, at) =>
      row(uniqueAddress(), { status: at % 2 === 0 ? 'sent' : 'dead', finishedAt: longAgo }),
    )
    const recent = row(uniqueAddress(), { status: 'sent', finishedAt: Date.now() - 29 * day })
    // pending for long (never finished): kept, whatever its age; not due, so nothing is sent
    const waiting = row(uniqueAddress(), { dueAt: Date.now() + 60_000 })
    const rows = [...old, recent, waiting]
    const { sender, removedAt } = senderOver(rows, up, { removeBatchSize: 2 })
    expect(await sender.round()).toMatchObject({ sent: 0, retried: 0, dead: 0, removed: 5 })
    expect(removedAt).toEqual([2, 2, 1])
    expect(rows).toEqual([recent, waiting])

    const many = Array.from({ length: 7 }, () =>
      row(uniqueAddress(), { status: 'sent', finishedAt: longAgo }),
    )
    const bounded = senderOver(many, up, { removeBatchSize: 2 })
    expect(await bounded.sender.round(2)).toMatchObject({ removed: 4 })
    expect(many).toHaveLength(3)
  })
})
