// Picking an upstream instance: smooth weighted round robin over the instances that are not ejected, and passive
// health checking (an instance failing N times in a row is ejected for a cool-down that grows on repeat).
//
// Smooth weighted round robin (nginx's): every pick adds each candidate's weight to its running score, takes the
// highest score and subtracts the total weight from it. Weights 1:3 give B,A,B,B / B,B,A,B ... exactly 1/4 and 3/4
// of the picks, spread out rather than in bursts, and deterministic (tests and benchmarks can count on the ratio).

export interface BalancedInstance {
  id: string
  address: string
  port: number
  /** relative share of traffic (Consul Meta.weight); 0 takes no traffic */
  weight: number
}

export interface EjectionPolicy {
  /** consecutive failures that eject an instance */
  failuresToEject: number
  /** cool-down of a first ejection, ms */
  baseEjectionMs: number
  /** cool-downs double with each ejection of the same instance up to this, ms */
  maxEjectionMs: number
}

interface InstanceState {
  instance: BalancedInstance
  currentWeight: number
  consecutiveFailures: number
  /** how often this instance has been ejected since it last succeeded after returning */
  ejections: number
  ejectedUntil: number
}

export type Pick<I extends BalancedInstance> =
  | { instance: I }
  /** nothing to pick: `retryAfterMs` until an ejected instance returns (undefined: no instance at all) */
  | { instance: undefined; retryAfterMs: number | undefined }

export interface BalancerSnapshot {
  instances: number
  available: number
  ejected: string[]
}

export class Balancer<I extends BalancedInstance = BalancedInstance> {
  private states: InstanceState[] = []

  constructor(
    private readonly policy: EjectionPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes a new list (from discovery); instances that stay keep their score and ejection state. */
  update(instances: I[]): void {
    const previous = new Map(this.states.map((state) => [state.instance.id, state]))
    this.states = instances.map((instance) => {
      const known = previous.get(instance.id)
      return known
        ? { ...known, instance }
        : { instance, currentWeight: 0, consecutiveFailures: 0, ejections: 0, ejectedUntil: 0 }
    })
  }

  /** The next instance, skipping ejected ones and those in `exclude` (already tried for this request). */
  pick(exclude: ReadonlySet<string> = new Set()): Pick<I> {
    const now = this.now()
    let total = 0
    let best: InstanceState | undefined
    let earliestReturn: number | undefined
    for (const state of this.states) {
      if (state.instance.weight <= 0 || exclude.has(state.instance.id)) continue
      if (state.ejectedUntil > now) {
        earliestReturn = Math.min(earliestReturn ?? state.ejectedUntil, state.ejectedUntil)
        continue
      }
      state.currentWeight += state.instance.weight
      total += state.instance.weight
      if (best === undefined || state.currentWeight > best.currentWeight) best = state
    }
    if (best === undefined) {
      return {
        instance: undefined,
        retryAfterMs: earliestReturn === undefined ? undefined : earliestReturn - now,
      }
    }
    best.currentWeight -= total
    return { instance: best.instance as I }
  }

  /** ms until the first ejected instance returns; undefined when none is ejected (or there are none) */
  nextReturnInMs(): number | undefined {
    const now = this.now()
    const returns = this.states.map((state) => state.ejectedUntil).filter((until) => until > now)
    return returns.length > 0 ? Math.min(...returns) - now : undefined
  }

  succeeded(id: string): void {
    const state = this.find(id)
    if (!state) return
    state.consecutiveFailures = 0
    // a clean answer after a return: the next ejection starts from the base cool-down again
    if (state.ejectedUntil <= this.now()) state.ejections = 0
  }

  /** Counts a failure; returns the cool-down in ms when this failure ejects the instance. */
  failed(id: string): number | undefined {
    const state = this.find(id)
    if (!state) return undefined
    const now = this.now()
    if (state.ejectedUntil > now) return undefined // already out (a request picked before the ejection)
    state.consecutiveFailures += 1
    if (state.consecutiveFailures < this.policy.failuresToEject) return undefined
    const coolDown = Math.min(this.policy.maxEjectionMs, this.policy.baseEjectionMs * 2 ** state.ejections)
    state.ejections += 1
    state.consecutiveFailures = 0
    state.ejectedUntil = now + coolDown
    state.currentWeight = 0
    return coolDown
  }

  snapshot(): BalancerSnapshot {
    const now = this.now()
    const ejected = this.states.filter((state) => state.ejectedUntil > now).map((state) => state.instance.id)
    return { instances: this.states.length, available: this.states.length - ejected.length, ejected }
  }

  private find(id: string): InstanceState | undefined {
    return this.states.find((state) => state.instance.id === id)
  }
}
