// The e-mail channel's sender: each round takes the mails that are due (the sender's lease on each, so another
// instance never takes the same one), renders each from its notification's data, sends it with the Message-ID that
// follows from the notification's id, and marks it sent. A failure is retried with exponential backoff (capped) until
// the last attempt, then the mail is dead: an error log, meridian_notification_emails_total{outcome="dead"} and, in the
// transaction that marks it, its dead letter on notification.email_requested.dlt (email-dead-letters.ts), which an
// operator's replay turns into a retry.
// At least once: a sender that dies after the server took the mail but before marking it sent leaves the row to be
// taken again when its lease ends, and the mail goes out a second time with the same Message-ID.
import {
  backoffMs,
  composeMail,
  isPermanentFailure,
  type Mailer,
  renderStoredTemplate,
  toMailSendError,
  type UnsubscribeTokens,
} from '@meridian/mail'
import type { DueEmail, EmailDeliveriesRepository } from '../data/email-deliveries-repository.ts'
import type { EmailDeadLetters } from './email-dead-letters.ts'

/** What a round did with the mails it took. */
export interface SendRound {
  sent: number
  retried: number
  dead: number
}

export type EmailOutcome = keyof SendRound

export interface EmailSenderSettings {
  from: string
  unsubscribeUrl: string
  unsubscribeMailto?: string | undefined
  /** mails taken at once (sent concurrently, through the pool's connections) */
  batchSize: number
  /** a taken mail is due again after this, should its sender die before marking it: longer than a send may take */
  leaseMs: number
  maxAttempts: number
  retryBaseMs: number
  retryMaxMs: number
}

export interface EmailSenderDependencies {
  deliveries: EmailDeliveriesRepository
  /** marks a mail dead with its dead letter (a removed user's mails die without one: there is nobody to retry for) */
  deadLetters: Pick<EmailDeadLetters, 'giveUp'>
  mailer: Mailer
  tokens: UnsubscribeTokens
  settings: EmailSenderSettings
  /** counts each mail's outcome (the metric) */
  count(outcome: EmailOutcome): void
  logger: {
    warn(details: Record<string, unknown>, message: string): void
    error(details: Record<string, unknown>, message: string): void
  }
}

/** The key a notification's mail is sent under: its Message-ID follows from it. */
export const emailIdempotencyKey = (notificationId: string): string => `notification-email:${notificationId}`

/** Why a taken mail cannot be sent now, when it cannot: retried (no address yet) or dead (the user is gone). */
function unsendable(due: DueEmail): { error: string; permanent: boolean } | undefined {
  if (due.removed) return { error: 'the user was removed', permanent: true }
  if (due.address === null) return { error: 'no address is known for the user yet', permanent: false }
  return undefined
}

export function createEmailSender({
  deliveries,
  deadLetters,
  mailer,
  tokens,
  settings,
  count,
  logger,
}: EmailSenderDependencies) {
  async function fail(due: DueEmail, error: string, permanent: boolean): Promise<EmailOutcome> {
    const last = permanent || due.attempts >= settings.maxAttempts
    const retryAt = last
      ? null
      : new Date(Date.now() + backoffMs(due.attempts, settings.retryBaseMs, settings.retryMaxMs))
    if (last && !due.removed) await deadLetters.giveUp(due, error)
    else await deliveries.markFailed(due.notificationId, error, retryAt)
    const details = { notificationId: due.notificationId, attempts: due.attempts, error }
    if (last) logger.error(details, 'notification e-mail: given up (dead)')
    else
      logger.warn(
        { ...details, retryAt: retryAt?.toISOString() },
        'notification e-mail: failed; retried later',
      )
    return last ? 'dead' : 'retried'
  }

  async function sendOne(due: DueEmail): Promise<EmailOutcome> {
    const refused = unsendable(due)
    if (refused) return fail(due, refused.error, refused.permanent)
    const address = due.address as string
    let mail: ReturnType<typeof composeMail>
    try {
      const token = tokens.sign({ userId: due.userId, type: due.type, address })
      mail = composeMail({
        from: settings.from,
        to: address,
        rendered: renderStoredTemplate(due.type, due.mailData),
        idempotencyKey: emailIdempotencyKey(due.notificationId),
        unsubscribe: { url: settings.unsubscribeUrl, token, mailto: settings.unsubscribeMailto },
      })
    } catch (error) {
      // stored data that does not render never will
      return fail(due, `not rendered: ${error instanceof Error ? error.message : String(error)}`, true)
    }
    try {
      const sent = await mailer.send(mail)
      await deliveries.markSent(due.notificationId, sent.messageId)
      return 'sent'
    } catch (caught) {
      const error = toMailSendError(caught)
      return fail(due, `${error.code}: ${error.message}`, isPermanentFailure(error))
    }
  }

  return {
    /** One round: batches of due mails until none is left (at most `maxBatches`), each mail's outcome counted. */
    async round(maxBatches = 20): Promise<SendRound> {
      const done: SendRound = { sent: 0, retried: 0, dead: 0 }
      for (let batch = 0; batch < maxBatches; batch += 1) {
        const taken = await deliveries.takeDue(settings.batchSize, settings.leaseMs)
        const outcomes = await Promise.all(taken.map(sendOne))
        for (const outcome of outcomes) {
          done[outcome] += 1
          count(outcome)
        }
        if (taken.length < settings.batchSize) break
      }
      return done
    },
  }
}

export type EmailSender = ReturnType<typeof createEmailSender>
