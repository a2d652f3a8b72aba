// The per-address limit of password reset requests: every request counts against its (normalised) address, whether
// or not an account has it, so that the limit's 429 says nothing about which accounts exist. Counted in Redis like
// the login throttle (fixed windows that start with the first request); the per-client limit is the route's.
import { createHash } from 'node:crypto'
import { AppError } from '@meridian/contracts'
import type { LoginFailureCounters } from '../data/login-failures.ts'

export interface ResetThrottleOptions {
  /** fixed-window counters (the login throttle's kind) with this limit's window */
  counters: LoginFailureCounters
  maxPerAccount: number
  windowSeconds: number
}

// the address is hashed: Redis holds no personal data
const accountKey = (email: string) =>
  `auth:password-resets:account:${createHash('sha256').update(email).digest('base64url')}`

export function createResetThrottle({ counters, maxPerAccount, windowSeconds }: ResetThrottleOptions) {
  return {
    /** Counts a request for the address; 429 with the seconds left in the window once the limit is passed. */
    async take(normalisedEmail: string): Promise<void> {
      const key = accountKey(normalisedEmail)
      await counters.increment([key])
      const [counted] = await counters.read([key])
      if (counted && counted.count > maxPerAccount) {
        throw AppError.rateLimited(
          Math.max(1, Math.min(windowSeconds, counted.secondsLeft)),
          'Too many password reset requests for this address. Try again later.',
        )
      }
    },
  }
}

export type ResetThrottle = ReturnType<typeof createResetThrottle>
