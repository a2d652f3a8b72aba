// A limit per address of the requests that mail a link to it (password resets, new verification links): every request
// counts against its (normalised) address, for a reset whether or not an account has it, so that the limit's 429
// says nothing about which accounts exist. Counted in Redis like the login throttle (fixed windows that start with
// the first request), each kind of request under keys of its own; the per-client limit is the routes'.
import { createHash } from 'node:crypto'
import { AppError } from '@meridian/contracts'
import type { LoginFailureCounters } from '../data/login-failures.ts'

export interface AddressThrottleOptions {
  /** fixed-window counters (the login throttle's kind) with this limit's window */
  counters: LoginFailureCounters
  /** what is counted, in the Redis keys: `auth:<kind>:account:<the address's hash>` */
  kind: string
  maxPerAddress: number
  windowSeconds: number
  /** the 429's message */
  refusal: string
}

export function createAddressThrottle({
  counters,
  kind,
  maxPerAddress,
  windowSeconds,
  refusal,
}: AddressThrottleOptions) {
  // the address is hashed: Redis holds no personal data
  const keyOf = (email: string) =>
    `auth:${kind}:account:${createHash('sha256').update(email).digest('base64url')}`
  return {
    /** Counts a request for the address; 429 with the seconds left in the window once the limit is passed. */
    async take(normalisedEmail: string): Promise<void> {
      const key = keyOf(normalisedEmail)
      await counters.increment([key])
      const [counted] = await counters.read([key])
      if (counted && counted.count > maxPerAddress) {
        throw AppError.rateLimited(Math.max(1, Math.min(windowSeconds, counted.secondsLeft)), refusal)
      }
    },
  }
}

export type AddressThrottle = ReturnType<typeof createAddressThrottle>
