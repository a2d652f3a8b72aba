// The security mails as @meridian/mail's stored-mail sender sends them (its round: batches under a lease, retries
// with backoff, dead after the last attempt, counted as meridian_auth_security_mails_total{outcome}): each is rendered
// from its data (its secret part decrypted) and sent with the Message-ID that follows from the mail's id, so a resend
// after a crash carries the same one; marking it sent or dead erases its secret part. A log line names the mail's id
// and template, never its address or link. After the round's sends, the mails finished more than MAIL_RETENTION_DAYS
// ago are removed, and expired links (password resets, address verifications), and while SIGNING_KEY_ENCRYPTION_SECRET
// is rotated the pending mails sealed under an older secret are sealed again: housekeeping on the same clock.
import { composeMail, renderStoredTemplate, type StoredMails } from '@meridian/mail'
import type { DueSecurityMail, SecurityMailsRepository } from '../data/security-mails-repository.ts'
import type { SecurityMailSealing } from './security-mails.ts'

/**
 * What a round does beside sending: expired links removed (password resets, address verifications), and while
 * SIGNING_KEY_ENCRYPTION_SECRET is rotated, the pending mails sealed under an older secret sealed again.
 */
export interface SecurityMailHousekeeping {
  expiredLinks: number
  resealed: number
}

/** How many pending mails a round seals again at most. */
const resealBatch = 200

export interface SecurityMailsToSend {
  mails: Pick<
    SecurityMailsRepository,
    'takeDue' | 'markSent' | 'markFailed' | 'removeFinished' | 'sealedPending' | 'reseal'
  >
  /** what removes expired links (password resets, address verifications) */
  expiring: readonly { deleteExpired(): Promise<number> }[]
  sealing: Pick<SecurityMailSealing, 'unseal' | 'resealed' | 'rotating'>
  from: string
}

/** The key a security mail is sent under: its Message-ID follows from it, the same on every resend. */
export const securityMailIdempotencyKey = (mailId: string): string => `security-mail:${mailId}`

export function securityMailsToSend({
  mails,
  expiring,
  sealing,
  from,
}: SecurityMailsToSend): StoredMails<DueSecurityMail, SecurityMailHousekeeping> {
  return {
    kind: 'security mail',
    takeDue: (limit, leaseMs) => mails.takeDue(limit, leaseMs),
    compose: (due) =>
      composeMail({
        from,
        to: due.recipient,
        rendered: renderStoredTemplate(due.template, sealing.unseal(due)),
        idempotencyKey: securityMailIdempotencyKey(due.id),
      }),
    markSent: (due, messageId) => mails.markSent(due.id, messageId),
    markFailed: (due, error, retryAt) => mails.markFailed(due.id, error, retryAt),
    removeFinished: (retentionDays, limit) => mails.removeFinished(retentionDays, limit),
    // the mail's id and template, never its address or data
    logDetails: (due) => ({ mailId: due.id, template: due.template }),
    async afterRound() {
      let expiredLinks = 0
      for (const links of expiring) expiredLinks += await links.deleteExpired()
      let resealed = 0
      if (sealing.rotating) {
        for (const mail of await mails.sealedPending(resealBatch)) {
          const after = sealing.resealed(mail)
          if (after !== undefined && (await mails.reseal(mail.id, mail.sealedData, after))) resealed += 1
        }
      }
      return { expiredLinks, resealed }
    },
  }
}
