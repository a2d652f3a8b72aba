// Carriers' API keys (X-Carrier-Key): the environment variable that lists them, the list read from it, and the
// constant-time check of a presented key. Shipping takes deliveries with them, order the receipt of returns.
import { createHash, timingSafeEqual } from 'node:crypto'
import { Type } from 'typebox'

/** One key: at least 16 characters, none of them a comma or white space. */
const carrierKey = '[^,\\s]{16,}'

/** The variable of carriers' keys, comma-separated; `what` says what they let a carrier do. */
export const carrierKeysVariable = (what: string) =>
  Type.String({
    default: '',
    pattern: `^\\s*(${carrierKey}\\s*(,\\s*${carrierKey}\\s*)*)?$`,
    description: `the API keys carriers send in X-Carrier-Key to ${what}, comma-separated, each at least 16 characters; empty: no carrier may (only admins)`,
  })

/** The keys of such a variable's value, each once, without the separators' white space. */
export const carrierKeysIn = (value: string): string[] => [
  ...new Set(
    value
      .split(',')
      .map((key) => key.trim())
      .filter(Boolean),
  ),
]

const digestOf = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest()

/**
 * Whether a presented key is one of the carriers' keys. SHA-256 digests are compared (equal lengths whatever was
 * sent), each with timingSafeEqual and every one of them, so neither the answer's time nor an early exit tells how
 * much of a key was right, or which key.
 */
export function carrierKeyMatcher(keys: readonly string[]): (presented: string) => boolean {
  const digests = keys.map(digestOf)
  return (presented) => {
    const digest = digestOf(presented)
    let matched = false
    for (const each of digests) matched = timingSafeEqual(digest, each) || matched
    return matched
  }
}
