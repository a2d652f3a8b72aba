// The claims of tokens verified a moment ago, found by the token itself: a client sends the same access token with
// every request, and reading it again (header, key lookup, signature or cache hash) is most of what authentication
// costs once the signature has been checked.
//
// An entry lives until the token expires or `maxAgeMs` has passed, whichever is first, and keeps the key that
// verified it: the verifier still looks that key up on every request, so a key withdrawn from the key set stops
// every token it signed at once. Nothing but the verifier writes here, and only after a full verification. Entries
// past their time are dropped as new ones come (oldest first), so a burst of tokens is not kept until it is evicted.

export type TokenClaims = Readonly<Record<string, unknown>>

export interface VerifiedToken {
  claims: TokenClaims
  /** the key id and public key (PEM) that verified an RS256 token */
  key?: { kid: string; pem: string }
}

export interface VerifiedTokensOptions {
  /** tokens remembered at most; the oldest entry makes room */
  capacity: number
  /** longest time a token is taken on trust, ms */
  maxAgeMs: number
  /** how far past exp a token is still accepted (the verifier's clock tolerance), ms */
  clockToleranceMs: number
  now?: () => number
}

export class VerifiedTokens {
  readonly #entries = new Map<string, VerifiedToken & { until: number }>()
  readonly #options: VerifiedTokensOptions
  readonly #now: () => number

  constructor(options: VerifiedTokensOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /** A token verified within its entry's lifetime, or undefined. */
  get(token: string): VerifiedToken | undefined {
    const entry = this.#entries.get(token)
    if (entry === undefined) return undefined
    if (entry.until <= this.#now()) {
      this.#entries.delete(token)
      return undefined
    }
    return entry
  }

  /** Remembers a token the verifier has just accepted (its claims are frozen: every request shares them). */
  remember(token: string, claims: Record<string, unknown>, key?: VerifiedToken['key']): TokenClaims {
    const frozen = Object.freeze(claims)
    const now = this.#now()
    const expiresAt =
      typeof claims.exp === 'number' ? claims.exp * 1000 + this.#options.clockToleranceMs : now
    const until = Math.min(now + this.#options.maxAgeMs, expiresAt)
    if (until <= now) return frozen
    this.#dropExpired(now)
    if (this.#entries.size >= this.#options.capacity) {
      const oldest = this.#entries.keys().next()
      if (!oldest.done) this.#entries.delete(oldest.value)
    }
    this.#entries.set(token, key ? { claims: frozen, key, until } : { claims: frozen, until })
    return frozen
  }

  /**
   * Drops the entries at the front (the oldest) that are past their time, stopping at the first that is not: a few
   * steps per call. One that expires earlier behind a later one waits for its turn, or for get().
   */
  #dropExpired(now: number): void {
    for (const [token, entry] of this.#entries) {
      if (entry.until > now) return
      this.#entries.delete(token)
    }
  }

  get size(): number {
    return this.#entries.size
  }
}
