// Carriers' API keys (X-Carrier-Key): the environment variable that lists them, the list read from it, and the
// constant-time check of a presented key. Shipping takes deliveries with them; order the receipt of returns, with
// each key bound to a named carrier (`name=key`) so that a carrier receives only the returns it carries.
import { createHash, timingSafeEqual } from 'node:crypto'
import { carrierKeyMaxLength, carrierNamePattern } from '@meridian/contracts'
import { Type } from 'typebox'

/**
 * One key: 16 characters at least, none of them a comma or white space, and no more than X-Carrier-Key's schema
 * takes (a longer key would be refused at every request, never matched).
 */
const carrierKey = `[^,\\s]{16,${carrierKeyMaxLength}}`

/** The variable of carriers' keys, comma-separated; `what` says what they let a carrier do. */
export const carrierKeysVariable = (what: string) =>
  Type.String({
    default: '',
    pattern: `^\\s*(${carrierKey}\\s*(,\\s*${carrierKey}\\s*)*)?$`,
    description: `the API keys carriers send in X-Carrier-Key to ${what}, comma-separated, each 16 to ${carrierKeyMaxLength} characters; empty: no carrier may (only admins)`,
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

/** One `name=key` entry: the carrier's name (contracts' CarrierName) and its key. */
const namedCarrierKey = `${carrierNamePattern.slice(1, -1)}=${carrierKey}`

/**
 * The variable of named carriers' keys: comma-separated `name=key` pairs (a carrier may have several keys, to rotate
 * them: `ups=old,ups=new`); `what` says what they let a carrier do.
 */
export const namedCarrierKeysVariable = (what: string) =>
  Type.String({
    default: '',
    pattern: `^\\s*(${namedCarrierKey}\\s*(,\\s*${namedCarrierKey}\\s*)*)?$`,
    expectation: `must be comma-separated name=key pairs: a carrier's name (lower-case letters, digits, dashes; up to 40) and its key (16 to ${carrierKeyMaxLength} characters, no comma or white space)`,
    description: `carriers' names and the API keys they send in X-Carrier-Key to ${what}, comma-separated name=key pairs (keys of 16 to ${carrierKeyMaxLength} characters); empty: no carrier may (only admins)`,
  })

export interface NamedCarrierKey {
  carrier: string
  key: string
}

/** The pairs of such a variable's value, each once, without the separators' white space. */
export function namedCarrierKeysIn(value: string): NamedCarrierKey[] {
  const pairs = new Map<string, NamedCarrierKey>()
  for (const entry of carrierKeysIn(value)) {
    const at = entry.indexOf('=')
    const pair = { carrier: entry.slice(0, at), key: entry.slice(at + 1) }
    pairs.set(`${pair.carrier}=${pair.key}`, pair)
  }
  return [...pairs.values()]
}

/**
 * The carrier a presented key belongs to, or undefined. Every digest is compared, each with timingSafeEqual, as
 * carrierKeyMatcher does. A key given to two carriers would make either's receipts the other's: refused here, at
 * start, naming the carriers (never the key).
 */
export function carrierOfKey(pairs: readonly NamedCarrierKey[]): (presented: string) => string | undefined {
  const owners = new Map<string, string>()
  for (const { carrier, key } of pairs) {
    const owner = owners.get(key)
    if (owner !== undefined && owner !== carrier) {
      throw new TypeError(
        `one carrier key is given to two carriers, ${owner} and ${carrier}: each key names one carrier`,
      )
    }
    owners.set(key, carrier)
  }
  const digests = [...owners].map(([key, carrier]) => ({ digest: digestOf(key), carrier }))
  return (presented) => {
    const digest = digestOf(presented)
    let found: string | undefined
    for (const each of digests) if (timingSafeEqual(digest, each.digest)) found = each.carrier
    return found
  }
}
