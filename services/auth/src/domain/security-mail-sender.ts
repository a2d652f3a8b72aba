// The security mails' sender: each round takes the mails that are due (the sender's lease on each, so another
// instance never takes the same one), renders each from its data (its secret part decrypted), sends it with the
// Message-ID that follows from the mail's id, and marks it sent, which erases its secret part. A failure is retried
// with exponential backoff (capped) until the last attempt, then the mail is dead: an error log and
// meridian_auth_security_mails_total{outcome="dead"}. At least once: a sender that dies after the server took the mail
// but before marking it sent leaves the row to be taken again when its lease ends, and the mail goes out a second
// time with the same Message-ID. The round also removes expired links (password resets, address verifications).
import {
  backoffMs,
  composeMail,
  isPermanentFailure,
  type Mailer,
  renderStoredTemplate,
  toMailSendError,
} from '@meridian/mail'
import type { DueSecurityMail, SecurityMailsRepository } from '../data/security-mails-repository.ts'
import type { SecurityMailSealing } from './security-mails.ts'

/** What a round did. */
export interface SecurityMailRound {
  sent: number
  retried: number
  dead: number
  /** expired links removed (password resets, address verifications) */
  expiredLinks: number
}

export type SecurityMailOutcome = 'sent' | 'retried' | 'dead'

export interface SecurityMailSenderSettings {
  from: string
  batchSize: number
  /** a taken mail is due again after this, should its sender die before marking it: longer than a send may take */
  leaseMs: number
  maxAttempts: number
  retryBaseMs: number
  retryMaxMs: number
}

export interface SecurityMailSenderDependencies {
  mails: SecurityMailsRepository
  /** what removes expired links (password resets, address verifications): housekeeping on the same clock */
  expiring: readonly { deleteExpired(): Promise<number> }[]
  sealing: Pick<SecurityMailSealing, 'unseal'>
  mailer: Mailer
  settings: SecurityMailSenderSettings
  /** counts each mail's outcome (the metric) */
  count(outcome: SecurityMailOutcome): void
  logger: {
    warn(details: Record<string, unknown>, message: string): void
    error(details: Record<string, unknown>, message: string): void
  }
}

/** The key a security mail is sent under: its Message-ID follows from it, the same on every resend. */
export const securityMailIdempotencyKey = (mailId: string): string => `security-mail:${mailId}`

export function createSecurityMailSender({
  mails,
  expiring,
  sealing,
  mailer,
  settings,
  count,
  logger,
}: SecurityMailSenderDependencies) {
  async function fail(due: DueSecurityMail, error: string, permanent: boolean): Promise<SecurityMailOutcome> {
    const last = permanent || due.attempts >= settings.maxAttempts
    const retryAt = last
      ? null
      : new Date(Date.now() + backoffMs(due.attempts, settings.retryBaseMs, settings.retryMaxMs))
    await mails.markFailed(due.id, error, retryAt)
    // the mail's id and template, never its address or data
    const details = { mailId: due.id, template: due.template, attempts: due.attempts, error }
    if (last) logger.error(details, 'security mail: given up (dead)')
    else logger.warn({ ...details, retryAt: retryAt?.toISOString() }, 'security mail: failed; retried later')
    return last ? 'dead' : 'retried'
  }

  async function sendOne(due: DueSecurityMail): Promise<SecurityMailOutcome> {
    let mail: ReturnType<typeof composeMail>
    try {
      mail = composeMail({
        from: settings.from,
        to: due.recipient,
        rendered: renderStoredTemplate(due.template, sealing.unseal(due)),
        idempotencyKey: securityMailIdempotencyKey(due.id),
      })
    } catch (error) {
      // stored data that does not render (or decrypt) never will; the message names no value of it
      return fail(due, `not rendered: ${error instanceof Error ? error.message : String(error)}`, true)
    }
    try {
      const sent = await mailer.send(mail)
      await mails.markSent(due.id, sent.messageId)
      return 'sent'
    } catch (caught) {
      const error = toMailSendError(caught)
      return fail(due, `${error.code}: ${error.message}`, isPermanentFailure(error))
    }
  }

  return {
    /** One round: batches of due mails until none is left (at most `maxBatches`), then expired links removed. */
    async round(maxBatches = 20): Promise<SecurityMailRound> {
      const done: SecurityMailRound = { sent: 0, retried: 0, dead: 0, expiredLinks: 0 }
      for (let batch = 0; batch < maxBatches; batch += 1) {
        const taken = await mails.takeDue(settings.batchSize, settings.leaseMs)
        const outcomes = await Promise.all(taken.map(sendOne))
        for (const outcome of outcomes) {
          done[outcome] += 1
          count(outcome)
        }
        if (taken.length < settings.batchSize) break
      }
      for (const links of expiring) done.expiredLinks += await links.deleteExpired()
      return done
    },
  }
}

export type SecurityMailSender = ReturnType<typeof createSecurityMailSender>
