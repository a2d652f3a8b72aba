// The memory of verified tokens in front of the signature check: never past a token's exp, never longer than its
// maximum age, bounded in size, and not holding on to tokens past their time.
import { describe, expect, it } from 'vitest'
import { VerifiedTokens } from '../src/auth/verified-tokens.ts'

function clock(startMs: number) {
  const state = { now: startMs }
  return { state, now: () => state.now }
}

const seconds = (ms: number) => Math.floor(ms / 1000)

describe('verified tokens', () => {
  it('when a token was verified, then it is known until its maximum age has passed', () => {
    const { state, now } = clock(1_000_000_000_000)
    const tokens = new VerifiedTokens({ capacity: 10, maxAgeMs: 60_000, clockToleranceMs: 5000, now })
    tokens.remember('token-a', { sub: 'u1', exp: seconds(state.now) + 900 })
    expect(tokens.get('token-a')?.claims).toEqual({ sub: 'u1', exp: seconds(state.now) + 900 })
    state.now += 59_999
    expect(tokens.get('token-a')?.claims.sub).toBe('u1')
    state.now += 1
    expect(tokens.get('token-a')).toBeUndefined()
    expect(tokens.size).toBe(0)
  })

  it('when a token expires before its maximum age, then it is forgotten at exp plus the clock tolerance', () => {
    const { state, now } = clock(1_000_000_000_000)
    const tokens = new VerifiedTokens({ capacity: 10, maxAgeMs: 60_000, clockToleranceMs: 5000, now })
    const exp = seconds(state.now) + 10
    tokens.remember('token-b', { sub: 'u2', exp })
    state.now = exp * 1000 + 4999
    expect(tokens.get('token-b')?.claims.sub).toBe('u2')
    state.now = exp * 1000 + 5000
    expect(tokens.get('token-b')).toBeUndefined()
  })

  it('when a token is already past its exp or has none, then it is not remembered', () => {
    const { state, now } = clock(1_000_000_000_000)
    const tokens = new VerifiedTokens({ capacity: 10, maxAgeMs: 60_000, clockToleranceMs: 5000, now })
    tokens.remember('old', { sub: 'u3', exp: seconds(state.now) - 60 })
    tokens.remember('no-exp', { sub: 'u4' })
    expect(tokens.get('old')).toBeUndefined()
    expect(tokens.get('no-exp')).toBeUndefined()
    expect(tokens.size).toBe(0)
  })

  it('when the memory is full, then the oldest token makes room', () => {
    const { state, now } = clock(1_000_000_000_000)
    const tokens = new VerifiedTokens({ capacity: 3, maxAgeMs: 60_000, clockToleranceMs: 5000, now })
    for (const name of ['t1', 't2', 't3', 't4'])
      tokens.remember(name, { sub: name, exp: seconds(state.now) + 900 })
    expect(tokens.size).toBe(3)
    expect(tokens.get('t1')).toBeUndefined()
    expect(tokens.get('t4')?.claims.sub).toBe('t4')
  })

  it('when claims are remembered, then they cannot be changed by a request that reads them', () => {
    const { state, now } = clock(1_000_000_000_000)
    const tokens = new VerifiedTokens({ capacity: 3, maxAgeMs: 60_000, clockToleranceMs: 5000, now })
    const claims = tokens.remember('t', { sub: 'u5', role: 'user', exp: seconds(state.now) + 900 })
    expect(() => {
      ;(claims as Record<string, unknown>).role = 'admin'
    }).toThrow(TypeError)
    expect(tokens.get('t')?.claims.role).toBe('user')
  })

  it('when tokens are past their time, then new ones coming drop them, oldest first, without waiting for a get', () => {
    const { state, now } = clock(1_000_000_000_000)
    const tokens = new VerifiedTokens({ capacity: 100, maxAgeMs: 60_000, clockToleranceMs: 5000, now })
    for (let i = 0; i < 50; i++)
      tokens.remember(`burst-${i}`, { sub: `u${i}`, exp: seconds(state.now) + 900 })
    state.now += 30_000
    tokens.remember('later', { sub: 'later', exp: seconds(state.now) + 900 })
    expect(tokens.size).toBe(51)
    state.now += 30_000
    tokens.remember('now', { sub: 'now', exp: seconds(state.now) + 900 })
    // the burst's minute is over: only the two that are not past it remain
    expect(tokens.size).toBe(2)
    expect(tokens.get('later')?.claims.sub).toBe('later')
  })
})
