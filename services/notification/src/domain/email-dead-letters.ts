// A mail given up, as an operator can act on it: in the transaction that marks it dead, notification.email_requested
// goes through the outbox as a dead letter (to notification.email_requested.dlt, with the last error, the attempts and
// when in the dead-letter headers), where the gateway's dead-letter pages list it. Replaying that topic brings the
// event to notification.email_requested, whose consumer makes the mail pending again: the sender then sends it once,
// as any pending mail; a mail already sent stays sent.
import type { EventData } from '@meridian/contracts'
import { type Sql, type TransactionSql, transaction } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { DueEmail, EmailDeliveriesRepository } from '../data/email-deliveries-repository.ts'

/** Who gave the mail up, as its dead letter's `consumer-group` header says: the notification service. */
export const emailDeadLetterGroup = 'notification'

export function createEmailDeadLetters({
  sql,
  deliveries,
}: {
  sql: Sql
  deliveries: EmailDeliveriesRepository
}) {
  return {
    /**
     * Marks the mail dead and appends its dead letter, in one transaction. False (and nothing appended) when the row
     * was no longer pending.
     */
    async giveUp(due: DueEmail, error: string): Promise<boolean> {
      return transaction(sql, async (tx) => {
        if (!(await deliveries.markFailed(due.notificationId, error, null, tx))) return false
        const requested = createEvent(
          'notification.email_requested',
          { notificationId: due.notificationId, userId: due.userId, type: due.type, attempts: due.attempts },
          { source: emailDeadLetterGroup },
        )
        await appendToOutbox(tx, requested, {
          aggregateId: due.userId,
          deadLetter: { errorMessage: error, group: emailDeadLetterGroup, retries: due.attempts },
        })
        return true
      })
    },

    /** A replayed dead letter: the mail pending again when it is dead; false when it is not (sent, or pending). */
    retry(data: EventData<'notification.email_requested'>, tx: TransactionSql): Promise<boolean> {
      return deliveries.revive(data.notificationId, tx)
    },
  }
}

export type EmailDeadLetters = ReturnType<typeof createEmailDeadLetters>
