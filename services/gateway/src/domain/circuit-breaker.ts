// A circuit breaker per routed service: closed -> open after N consecutive failed requests, open answers at once,
// half-open lets a single probe through whose outcome closes or reopens the circuit.

export type CircuitState = 'closed' | 'open' | 'half-open'

export interface CircuitBreakerPolicy {
  /** consecutive failed requests that open the circuit */
  failureThreshold: number
  /** how long the circuit stays open before a probe is allowed, ms */
  openMs: number
}

export type Admission = { admitted: true; probe: boolean } | { admitted: false; retryAfterMs: number }

export class CircuitBreaker {
  private state: CircuitState = 'closed'
  private consecutiveFailures = 0
  private openedAt = 0
  private probeInFlight = false

  constructor(
    private readonly policy: CircuitBreakerPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a request may go upstream now; a probe's caller must report its outcome (succeeded/failed). */
  admit(): Admission {
    if (this.state === 'closed') return { admitted: true, probe: false }
    const reopensAt = this.openedAt + this.policy.openMs
    const now = this.now()
    if (this.state === 'open' && now >= reopensAt) this.state = 'half-open'
    if (this.state === 'half-open' && !this.probeInFlight) {
      this.probeInFlight = true
      return { admitted: true, probe: true }
    }
    // open, or half-open with its probe still out: the probe's outcome decides within one upstream timeout
    return { admitted: false, retryAfterMs: Math.max(reopensAt - now, 1000) }
  }

  succeeded(): void {
    this.consecutiveFailures = 0
    this.probeInFlight = false
    this.state = 'closed'
  }

  /** Returns true when this failure opened the circuit. */
  failed(): boolean {
    this.consecutiveFailures += 1
    const wasProbe = this.state === 'half-open'
    this.probeInFlight = false
    if (wasProbe || (this.state === 'closed' && this.consecutiveFailures >= this.policy.failureThreshold)) {
      this.state = 'open'
      this.openedAt = this.now()
      return true
    }
    return false
  }

  /** A request that ended without an upstream verdict (the client went away): frees a probe slot. */
  abandoned(probe: boolean): void {
    if (probe) this.probeInFlight = false
  }

  get current(): CircuitState {
    if (this.state === 'open' && this.now() >= this.openedAt + this.policy.openMs) return 'half-open'
    return this.state
  }
}
