// The e-mail channel's mails as @meridian/mail's stored-mail sender sends them (its round: batches under a lease,
// retries with backoff, dead after the last attempt, counted as meridian_notification_emails_total{outcome}): each is
// rendered from its notification's data with its one-click unsubscribe link, to the user's address as it is now, and
// sent with the Message-ID that follows from the notification's id. A mail whose user was removed is dead at once; one
// whose user has no known address yet is retried. A mail given up is marked dead, in the same transaction, with its
// dead letter on notification.email_requested.dlt (email-dead-letters.ts), which an operator's replay turns into a
// retry (a removed user's mails die without one: there is nobody to retry for). A log line names the notification,
// never the address. The rows of mails finished more than MAIL_RETENTION_DAYS ago are removed in the rounds.
import { composeMail, renderStoredTemplate, type StoredMails, type UnsubscribeTokens } from '@meridian/mail'
import type { DueEmail, EmailDeliveriesRepository } from '../data/email-deliveries-repository.ts'
import type { EmailDeadLetters } from './email-dead-letters.ts'

export interface EmailSettings {
  from: string
  unsubscribeUrl: string
  unsubscribeMailto?: string | undefined
}

export interface EmailsToSend {
  deliveries: Pick<EmailDeliveriesRepository, 'takeDue' | 'markSent' | 'markFailed' | 'removeFinished'>
  /** marks a mail dead with its dead letter */
  deadLetters: Pick<EmailDeadLetters, 'giveUp'>
  tokens: UnsubscribeTokens
  settings: EmailSettings
}

/** The key a notification's mail is sent under: its Message-ID follows from it. */
export const emailIdempotencyKey = (notificationId: string): string => `notification-email:${notificationId}`

export function emailsToSend({
  deliveries,
  deadLetters,
  tokens,
  settings,
}: EmailsToSend): StoredMails<DueEmail> {
  return {
    kind: 'notification e-mail',
    takeDue: (limit, leaseMs) => deliveries.takeDue(limit, leaseMs),
    unsendable(due) {
      if (due.removed) return { error: 'the user was removed', permanent: true }
      if (due.address === null) return { error: 'no address is known for the user yet', permanent: false }
      return undefined
    },
    compose(due) {
      const address = due.address ?? ''
      const token = tokens.sign({ userId: due.userId, type: due.type, address })
      return composeMail({
        from: settings.from,
        to: address,
        rendered: renderStoredTemplate(due.type, due.mailData),
        idempotencyKey: emailIdempotencyKey(due.notificationId),
        unsubscribe: { url: settings.unsubscribeUrl, token, mailto: settings.unsubscribeMailto },
      })
    },
    markSent: (due, messageId) => deliveries.markSent(due.notificationId, messageId),
    markFailed: (due, error, retryAt) =>
      retryAt === null && !due.removed
        ? deadLetters.giveUp(due, error)
        : deliveries.markFailed(due.notificationId, error, retryAt),
    removeFinished: (retentionDays, limit) => deliveries.removeFinished(retentionDays, limit),
    logDetails: (due) => ({ notificationId: due.notificationId }),
  }
}
