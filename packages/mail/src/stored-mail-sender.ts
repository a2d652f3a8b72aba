// A sender of stored mails (auth's security mails, notification's e-mails), one round at a time: the mails that are
// due are taken in batches (each under the sender's lease, so another instance never takes the same one), composed,
// sent through the Mailer and marked sent. A failure is due again after a capped exponential backoff (backoffMs) until
// the last attempt, then the mail is dead; it is dead at once when no further attempt can fix it: the SMTP server
// refused it for good, its stored data does not render, or the caller says it never can be sent. Each outcome is
// counted, and each failure logged (an error line when dead, a warning when retried) with what the caller says of
// the mail (an id, a template), never its address or data. The caller owns its table's statements, what a mail is
// composed from and what marking it does; the sender owns the round. At least once: a sender that dies after the
// server took a mail but before marking it leaves the row to be taken again when its lease ends. After its sends, a
// round removes the mails finished (sent or dead) more than the retention's days ago, in bounded batches.
import type { ComposedMail } from './compose.ts'
import { backoffMs, isPermanentFailure } from './retries.ts'
import { type Mailer, toMailSendError } from './transport.ts'

export type StoredMailOutcome = 'sent' | 'retried' | 'dead'

/** What a round did with the mails it took, and how many finished ones it removed. */
export type StoredMailRound = Record<StoredMailOutcome, number> & { removed: number }

export interface StoredMailSettings {
  /** mails taken at once (sent concurrently, through the pool's connections) */
  batchSize: number
  /** a taken mail is due again after this, should its sender die before marking it: longer than a send may take */
  leaseMs: number
  maxAttempts: number
  retryBaseMs: number
  retryMaxMs: number
  /** a mail finished (sent or dead) is removed this many days later (MAIL_RETENTION_DAYS) */
  retentionDays: number
  /** finished mails removed by one statement: a round removes batches of them until one comes back short */
  removeBatchSize: number
}

/** Why a taken mail cannot be sent now: the error stored and logged, and whether it is dead at once. */
export interface Unsendable {
  error: string
  permanent: boolean
}

/** What a round needs of the caller's table and mails. */
export interface StoredMails<Due extends { attempts: number }, Extra extends object = object> {
  /** what the mails are called in the log lines: `security mail`, `notification e-mail` */
  kind: string
  /** takes up to `limit` due mails, each with its attempt counted (this one included) and leased for `leaseMs` */
  takeDue(limit: number, leaseMs: number): Promise<Due[]>
  /** the mail to send; throws when its stored data does not render (dead at once, as `not rendered: …`) */
  compose(due: Due): ComposedMail
  /** why a mail cannot be sent now, when it cannot (asked before composing it) */
  unsendable?(due: Due): Unsendable | undefined
  markSent(due: Due, messageId: string): Promise<unknown>
  /** it failed: due again at `retryAt`, or dead when null (its last attempt, or a permanent failure) */
  markFailed(due: Due, error: string, retryAt: Date | null): Promise<unknown>
  /** removes up to `limit` mails finished (sent or dead) more than `retentionDays` ago; how many it removed */
  removeFinished(retentionDays: number, limit: number): Promise<number>
  /** what a log line says of a mail: its id (and template), never its address or data */
  logDetails(due: Due): Record<string, unknown>
  /** housekeeping after the round's sends (e.g. expired links removed); what it did joins the round's result */
  afterRound?(): Promise<Extra>
}

export interface StoredMailLogger {
  warn(details: Record<string, unknown>, message: string): void
  error(details: Record<string, unknown>, message: string): void
}

export interface StoredMailSenderOptions<Due extends { attempts: number }, Extra extends object = object> {
  mails: StoredMails<Due, Extra>
  mailer: Mailer
  settings: StoredMailSettings
  /** counts each mail's outcome (the metric) */
  count?(outcome: StoredMailOutcome): void
  logger: StoredMailLogger
}

export interface StoredMailSender<Extra extends object = object> {
  /**
   * One round: batches of due mails until fewer than a batch are left, then batches of finished mails past their
   * retention removed likewise (at most `maxBatches` of each), then the caller's housekeeping.
   */
  round(maxBatches?: number): Promise<StoredMailRound & Extra>
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

export function createStoredMailSender<Due extends { attempts: number }, Extra extends object = object>({
  mails,
  mailer,
  settings,
  count,
  logger,
}: StoredMailSenderOptions<Due, Extra>): StoredMailSender<Extra> {
  async function fail(due: Due, error: string, permanent: boolean): Promise<StoredMailOutcome> {
    const last = permanent || due.attempts >= settings.maxAttempts
    const retryAt = last
      ? null
      : new Date(Date.now() + backoffMs(due.attempts, settings.retryBaseMs, settings.retryMaxMs))
    await mails.markFailed(due, error, retryAt)
    const details = { ...mails.logDetails(due), attempts: due.attempts, error }
    if (last) logger.error(details, `${mails.kind}: given up (dead)`)
    else logger.warn({ ...details, retryAt: retryAt?.toISOString() }, `${mails.kind}: failed; retried later`)
    return last ? 'dead' : 'retried'
  }

  async function sendOne(due: Due): Promise<StoredMailOutcome> {
    const refused = mails.unsendable?.(due)
    if (refused) return fail(due, refused.error, refused.permanent)
    let mail: ComposedMail
    try {
      mail = mails.compose(due)
    } catch (error) {
      // stored data that does not render (or decrypt) never will; the message names no value of it
      return fail(due, `not rendered: ${messageOf(error)}`, true)
    }
    try {
      const sent = await mailer.send(mail)
      await mails.markSent(due, sent.messageId)
      return 'sent'
    } catch (caught) {
      const error = toMailSendError(caught)
      return fail(due, `${error.code}: ${error.message}`, isPermanentFailure(error))
    }
  }

  /** Finished mails past their retention removed, a batch at a time: how many. */
  async function removeFinished(maxBatches: number): Promise<number> {
    let removed = 0
    for (let batch = 0; batch < maxBatches; batch += 1) {
      const gone = await mails.removeFinished(settings.retentionDays, settings.removeBatchSize)
      removed += gone
      if (gone < settings.removeBatchSize) break
    }
    return removed
  }

  return {
    async round(maxBatches = 20) {
      const done: StoredMailRound = { sent: 0, retried: 0, dead: 0, removed: 0 }
      for (let batch = 0; batch < maxBatches; batch += 1) {
        const taken = await mails.takeDue(settings.batchSize, settings.leaseMs)
        const outcomes = await Promise.all(taken.map(sendOne))
        for (const outcome of outcomes) {
          done[outcome] += 1
          count?.(outcome)
        }
        if (taken.length < settings.batchSize) break
      }
      done.removed = await removeFinished(maxBatches)
      const housekept = mails.afterRound ? await mails.afterRound() : undefined
      // without afterRound, Extra is the default `object`: the round's counts are the whole result
      return { ...housekept, ...done } as StoredMailRound & Extra
    },
  }
}
