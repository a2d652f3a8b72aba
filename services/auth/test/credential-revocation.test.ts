// The rule for tokens issued right after a revocation, on a test clock: a new token never falls in the revoked
// second, even when a timer wakes up early.
import { describe, expect, it } from 'vitest'
import { awaitSecondAfter } from '../src/domain/credential-revocation.ts'

/** A clock to sleep on: each sleep advances it by what was asked, less `early` ms when longer than that. */
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

describe('awaitSecondAfter', () => {
  it('when the user was revoked earlier in the current second, then it waits until the next second begins', async () => {
    const time = testClock(1_000_000_400)
    await awaitSecondAfter(1_000_000_300, time.clock, time.sleep)
    expect(time.sleeps).toEqual([600])
    expect(time.clock()).toBe(1_000_001_000)
  })

  it('when the timer wakes a millisecond early (Node timers may), then it waits again until the next second has begun', async () => {
    const time = testClock(1_000_000_400, 1)
    await awaitSecondAfter(1_000_000_300, time.clock, time.sleep)
    // the first wake is at …999, still the revoked second: a token issued then would be refused
    expect(time.sleeps).toEqual([600, 1])
    expect(time.clock()).toBe(1_000_001_000)
  })

  it('when the revocation is from an earlier second, or there is none, then it does not wait', async () => {
    const earlier = testClock(1_000_000_400)
    await awaitSecondAfter(999_999_800, earlier.clock, earlier.sleep)
    expect(earlier.sleeps).toEqual([])
    const none = testClock(1_000_000_400)
    await awaitSecondAfter(0, none.clock, none.sleep)
    expect(none.sleeps).toEqual([])
  })
})
