// Idempotency-Key handling of the Stripe subset: a store of the first answer given for each key, compared by a keyed
// hash of the request's canonical parameters. A key in use by a call still running is held; an answer that is not to
// be kept (a 500, a request rejected before it ran) frees the key again; keys of the Stripe subset expire after a TTL.
import { createHmac, randomBytes } from 'node:crypto'

/** An answer as it is sent, and as it is kept for a key. */
export interface StoredResponse {
  status: number
  body: unknown
  headers: Record<string, string>
}

/** An answer, and whether a key keeps it (false: a retry with the key runs again). */
export interface Outcome extends StoredResponse {
  store: boolean
}

/** What a key says of a request: run it (then settle the claim), replay an answer, or refuse it. */
export type Claim =
  | { kind: 'run'; settle(outcome: Outcome): void; abandon(): void }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'mismatch' }
  | { kind: 'in_flight' }

/** response undefined: the first call with the key is still running */
interface IdempotencyRecord {
  fingerprint: string
  response?: StoredResponse
  expiresAt: number
}

/** JSON with the keys of every object sorted: the same parameters in another key order are the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`
  return JSON.stringify(value)
}

/** Keyed hashes of requests: the store keeps no parameter (a card number included) in the clear. */
export function createFingerprinter(): (scope: string, body: unknown) => string {
  const secret = randomBytes(32)
  return (scope, body) =>
    createHmac('sha256', secret)
      .update(`${scope}\n${canonicalJson(body)}`)
      .digest('hex')
}

/**
 * The answers kept for keys. ttlMs undefined: a key never expires; otherwise a key is forgotten ttlMs after
 * its first use (the Stripe subset's, 24 h by default), and expired keys are swept as new ones come.
 */
export class IdempotencyStore {
  readonly #records = new Map<string, IdempotencyRecord>()
  readonly #ttlMs: number | undefined
  readonly #now: () => number

  constructor(ttlMs?: number, now: () => number = Date.now) {
    this.#ttlMs = ttlMs
    this.#now = now
  }

  /** The first call with a key runs; the same key with the same fingerprint replays, or is held while it runs. */
  claim(key: string, fingerprint: string): Claim {
    const now = this.#now()
    this.#sweep(now)
    const existing = this.#records.get(key)
    if (existing && existing.expiresAt > now) {
      if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' }
      if (!existing.response) return { kind: 'in_flight' }
      return { kind: 'replay', response: existing.response }
    }
    this.#records.delete(key)
    const record: IdempotencyRecord = {
      fingerprint,
      expiresAt: this.#ttlMs === undefined ? Number.POSITIVE_INFINITY : now + this.#ttlMs,
    }
    this.#records.set(key, record)
    const release = () => {
      if (this.#records.get(key) === record) this.#records.delete(key)
    }
    return {
      kind: 'run',
      settle: (outcome) => {
        if (outcome.store)
          record.response = { status: outcome.status, body: outcome.body, headers: outcome.headers }
        else release()
      },
      abandon: release,
    }
  }

  get size(): number {
    return this.#records.size
  }

  /** Records are in the order they were made, so expired ones are at the front; one still running is stepped over. */
  #sweep(now: number): void {
    if (this.#ttlMs === undefined) return
    for (const [key, record] of this.#records) {
      if (record.expiresAt > now) return
      if (record.response) this.#records.delete(key)
    }
  }
}
