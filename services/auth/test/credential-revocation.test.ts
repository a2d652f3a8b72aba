// The credential revoker's rule for new tokens, on a test clock: a token issued right after a revocation never falls
// in the revoked second, even when a timer wakes up early.
import type { CredentialRevocations } from '@meridian/service-kit'
import { describe, expect, it } from 'vitest'
import { createCredentialRevoker } from '../src/domain/credential-revocation.ts'

/** A clock the revoker sleeps on: each sleep advances it by what was asked, less `early` ms when longer than that. */
function testClock(start: number, early = 0) {
  let now = start
  const sleeps: number[] = []
  return {
    sleeps,
    clock: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms)
      now += ms > early ? ms - early : ms
    },
  }
}

function localView(revokedBefore: number): CredentialRevocations {
  return { revokedBefore: () => revokedBefore, apply: () => {}, close: async () => {} }
}

function revokerOn(time: ReturnType<typeof testClock>, revokedBefore: number) {
  return createCredentialRevoker({
    store: { publish: async () => {} },
    local: localView(revokedBefore),
    refreshTokens: { revokeAllOfUser: async () => 0 },
    keepForMs: 60_000,
    clock: time.clock,
    sleep: time.sleep,
  })
}

describe('awaitIssuable', () => {
  it('when the user was revoked earlier in the current second, then it waits until the next second begins', async () => {
    const time = testClock(1_000_000_400)
    await revokerOn(time, 1_000_000_300).awaitIssuable('user-1')
    expect(time.sleeps).toEqual([600])
    expect(time.clock()).toBe(1_000_001_000)
  })

  it('when the timer wakes a millisecond early (Node timers may), then it waits again until the next second has begun', async () => {
    const time = testClock(1_000_000_400, 1)
    await revokerOn(time, 1_000_000_300).awaitIssuable('user-1')
    // the first wake is at …999, still the revoked second: a token issued then would be refused
    expect(time.sleeps).toEqual([600, 1])
    expect(Math.floor(time.clock() / 1000) * 1000).toBeGreaterThanOrEqual(1_000_000_300)
    expect(time.clock()).toBe(1_000_001_000)
  })

  it('when the revocation is from an earlier second, or there is none, then it does not wait', async () => {
    const earlier = testClock(1_000_000_400)
    await revokerOn(earlier, 999_999_800).awaitIssuable('user-1')
    expect(earlier.sleeps).toEqual([])
    const none = testClock(1_000_000_400)
    await revokerOn(none, 0).awaitIssuable('user-1')
    expect(none.sleeps).toEqual([])
  })
})
