// Brute-force protection of POST /login: failed attempts are counted per client address and per account (the
// normalised email, whether or not such a user exists, so the throttle says nothing about which accounts exist).
import { createHash } from 'node:crypto'
import { AppError } from '@meridian/contracts'
import type { LoginFailureCounters } from '../data/login-failures.ts'

export interface LoginThrottleOptions {
  counters: LoginFailureCounters
  maxPerAddress: number
  maxPerAccount: number
  windowSeconds: number
}

const keyPrefix = 'auth:login-failures'
// the email is hashed: Redis holds no personal data
const accountKey = (email: string) =>
  `${keyPrefix}:account:${createHash('sha256').update(email).digest('base64url')}`
const addressKey = (address: string) => `${keyPrefix}:address:${address}`

export function createLoginThrottle(options: LoginThrottleOptions) {
  const { counters, maxPerAddress, maxPerAccount, windowSeconds } = options
  return {
    /** 429 with the seconds until the blocking window ends, when the address or the account used up its attempts. */
    async assertMayAttempt(address: string, normalisedEmail: string): Promise<void> {
      const [byAddress, byAccount] = await counters.read([addressKey(address), accountKey(normalisedEmail)])
      const blocked = [
        byAddress && byAddress.count >= maxPerAddress ? byAddress.secondsLeft : 0,
        byAccount && byAccount.count >= maxPerAccount ? byAccount.secondsLeft : 0,
      ]
      if (blocked.some((seconds) => seconds > 0)) {
        throw AppError.rateLimited(
          Math.min(windowSeconds, Math.max(...blocked)),
          'Too many failed login attempts. Try again later.',
        )
      }
    },

    async recordFailure(address: string, normalisedEmail: string): Promise<void> {
      await counters.increment([addressKey(address), accountKey(normalisedEmail)])
    },

    /** A successful login clears its account's counter (not the address's: one good password does not vouch for an address). */
    async recordSuccess(normalisedEmail: string): Promise<void> {
      await counters.reset(accountKey(normalisedEmail))
    },
  }
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>
