// How a sender of stored mails retries: the wait before the next attempt (exponential, capped) and which failures no
// further attempt can fix. Pure: the notification service's sender and auth's security-mail sender share them.
import type { MailSendError } from './transport.ts'

/** The wait before attempt `attempts + 1`: base × 2^(attempts − 1), at most `max`. */
export function backoffMs(attempts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(attempts - 1, 30)))
}

/** Failures that another try cannot fix: the server refused the recipient or the mail for good (5xx, not a login). */
export function isPermanentFailure(error: MailSendError): boolean {
  return error.code === 'EENVELOPE' && error.responseCode !== undefined && error.responseCode >= 500
}
