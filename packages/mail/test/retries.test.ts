// A stored mail's retries, as both senders (notification's, auth's security mails) apply them: the wait doubles from
// the base up to the cap, and only a 5xx refusal of the envelope is final.
import { describe, expect, it } from 'vitest'
import { backoffMs, isPermanentFailure, MailSendError } from '../src/index.ts'

describe('retries', () => {
  it('when attempts grow, then the wait doubles from the base and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempts) => backoffMs(attempts, 100, 1000))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ])
    expect(backoffMs(0, 100, 1000)).toBe(100)
    expect(backoffMs(10_000, 100, 1000)).toBe(1000)
  })

  it('when the server refuses the envelope with a 5xx, then the failure is permanent; a 4xx, a login or a timeout is not', () => {
    expect(isPermanentFailure(new MailSendError('no such user', 'EENVELOPE', 550))).toBe(true)
    expect(isPermanentFailure(new MailSendError('mailbox busy', 'EENVELOPE', 451))).toBe(false)
    expect(isPermanentFailure(new MailSendError('bad login', 'EAUTH', 535))).toBe(false)
    expect(isPermanentFailure(new MailSendError('no answer', 'TIMEOUT', undefined))).toBe(false)
  })
})
