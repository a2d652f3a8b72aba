// Choosing instances: smooth weighted round robin, passive ejection with growing cool-downs, the circuit breaker.
import { describe, expect, it } from 'vitest'
import { type BalancedInstance, Balancer } from '../src/domain/balancer.ts'
import { CircuitBreaker } from '../src/domain/circuit-breaker.ts'

const instance = (id: string, weight = 1): BalancedInstance => ({ id, address: '127.0.0.1', port: 1, weight })
const policy = { failuresToEject: 3, baseEjectionMs: 1000, maxEjectionMs: 4000 }

function clock() {
  let now = 0
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms
    },
  }
}

describe('balancer', () => {
  it('when weights are 1 and 3, then picks follow them exactly and are interleaved', () => {
    const balancer = new Balancer(policy)
    balancer.update([instance('a', 1), instance('b', 3)])
    const picks = Array.from({ length: 8 }, () => balancer.pick().instance?.id)
    expect(picks.filter((id) => id === 'a')).toHaveLength(2)
    expect(picks.filter((id) => id === 'b')).toHaveLength(6)
    // never a's twice in a row
    expect(picks.join('')).not.toContain('aa')
  })

  it('when an instance has weight 0, then it takes no traffic', () => {
    const balancer = new Balancer(policy)
    balancer.update([instance('a', 0), instance('b', 1)])
    expect(new Set(Array.from({ length: 5 }, () => balancer.pick().instance?.id))).toEqual(new Set(['b']))
  })

  it('when an instance fails N times in a row, then it is ejected until its cool-down ends', () => {
    const time = clock()
    const balancer = new Balancer(policy, time.now)
    balancer.update([instance('a'), instance('b')])
    expect(balancer.failed('a')).toBeUndefined()
    expect(balancer.failed('a')).toBeUndefined()
    expect(balancer.failed('a')).toBe(1000)
    expect(Array.from({ length: 4 }, () => balancer.pick().instance?.id)).toEqual(['b', 'b', 'b', 'b'])
    time.advance(1000)
    expect(new Set(Array.from({ length: 4 }, () => balancer.pick().instance?.id))).toEqual(
      new Set(['a', 'b']),
    )
  })

  it('when a success comes between failures, then the count starts again', () => {
    const balancer = new Balancer(policy)
    balancer.update([instance('a')])
    balancer.failed('a')
    balancer.failed('a')
    balancer.succeeded('a')
    expect(balancer.failed('a')).toBeUndefined()
  })

  it('when an instance is ejected again after returning, then its cool-down doubles up to the maximum', () => {
    const time = clock()
    const balancer = new Balancer(policy, time.now)
    balancer.update([instance('a')])
    const ejectAgain = () => {
      balancer.failed('a')
      balancer.failed('a')
      return balancer.failed('a')
    }
    expect(ejectAgain()).toBe(1000)
    time.advance(1000)
    expect(ejectAgain()).toBe(2000)
    time.advance(2000)
    expect(ejectAgain()).toBe(4000)
    time.advance(4000)
    expect(ejectAgain()).toBe(4000)
    time.advance(4000)
    // a clean answer after returning resets the growth
    balancer.succeeded('a')
    expect(ejectAgain()).toBe(1000)
  })

  it('when every instance is ejected, then nothing is picked and the wait until the first returns is given', () => {
    const time = clock()
    const balancer = new Balancer(policy, time.now)
    balancer.update([instance('a')])
    for (let i = 0; i < 3; i += 1) balancer.failed('a')
    time.advance(400)
    expect(balancer.pick()).toEqual({ instance: undefined, retryAfterMs: 600 })
  })

  it('when there are no instances, then nothing is picked and no wait is known', () => {
    const balancer = new Balancer(policy)
    expect(balancer.pick()).toEqual({ instance: undefined, retryAfterMs: undefined })
  })

  it('when discovery sends a new list, then a known instance keeps its ejection', () => {
    const balancer = new Balancer(policy)
    balancer.update([instance('a'), instance('b')])
    for (let i = 0; i < 3; i += 1) balancer.failed('a')
    balancer.update([instance('a'), instance('b'), instance('c')])
    expect(balancer.snapshot()).toEqual({ instances: 3, available: 2, ejected: ['a'] })
  })

  it('when some instances were already tried, then they are skipped', () => {
    const balancer = new Balancer(policy)
    balancer.update([instance('a', 5), instance('b', 1)])
    expect(balancer.pick(new Set(['a'])).instance?.id).toBe('b')
  })
})

describe('circuit breaker', () => {
  const breakerPolicy = { failureThreshold: 3, openMs: 10_000 }

  it('when failures reach the threshold, then the circuit opens and answers with the time left', () => {
    const time = clock()
    const breaker = new CircuitBreaker(breakerPolicy, time.now)
    expect(breaker.failed()).toBe(false)
    expect(breaker.failed()).toBe(false)
    expect(breaker.failed()).toBe(true)
    time.advance(4000)
    expect(breaker.admit()).toEqual({ admitted: false, retryAfterMs: 6000 })
    expect(breaker.current).toBe('open')
  })

  it('when the open time is over, then exactly one probe goes through and its success closes the circuit', () => {
    const time = clock()
    const breaker = new CircuitBreaker(breakerPolicy, time.now)
    for (let i = 0; i < 3; i += 1) breaker.failed()
    time.advance(10_000)
    expect(breaker.admit()).toEqual({ admitted: true, probe: true })
    expect(breaker.admit().admitted).toBe(false)
    breaker.succeeded()
    expect(breaker.current).toBe('closed')
    expect(breaker.admit()).toEqual({ admitted: true, probe: false })
  })

  it('when the probe fails, then the circuit opens again for a full period', () => {
    const time = clock()
    const breaker = new CircuitBreaker(breakerPolicy, time.now)
    for (let i = 0; i < 3; i += 1) breaker.failed()
    time.advance(10_000)
    breaker.admit()
    expect(breaker.failed()).toBe(true)
    expect(breaker.admit()).toEqual({ admitted: false, retryAfterMs: 10_000 })
  })

  it('when a probe is abandoned, then the next request may probe', () => {
    const time = clock()
    const breaker = new CircuitBreaker(breakerPolicy, time.now)
    for (let i = 0; i < 3; i += 1) breaker.failed()
    time.advance(10_000)
    breaker.admit()
    breaker.abandoned(true)
    expect(breaker.admit()).toEqual({ admitted: true, probe: true })
  })

  it('when successes come between failures, then the circuit stays closed', () => {
    const breaker = new CircuitBreaker(breakerPolicy)
    breaker.failed()
    breaker.failed()
    breaker.succeeded()
    breaker.failed()
    breaker.failed()
    expect(breaker.current).toBe('closed')
  })
})
