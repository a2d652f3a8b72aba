// The event limits' rules on their own (a clock and a user rate of the test's): a connection's bucket, its refill,
// refusals leading to the disconnection and forgiven once it has filled again, and the user's rate on top of it.
import { describe, expect, it } from 'vitest'
import { type Charge, EventLimits } from '../src/channels/event-limits.ts'
import type { Taken, UserRate } from '../src/data/user-rates.ts'

/** A clock the test moves, and limits of 5 events per second, 10 at once, closed at the 4th refusal. */
function limited(userRate: UserRate = { take: () => ({ allowed: true }) }) {
  const clock = { now: 1000 }
  const limits = new EventLimits({
    ratePerSecond: 5,
    burst: 10,
    refusalsBeforeDisconnect: 4,
    userEvents: userRate,
    now: () => clock.now,
  })
  return { clock, limits }
}

const settled = (charge: Charge | Promise<Charge>): Charge => {
  if (charge instanceof Promise) throw new Error('expected an answer at once')
  return charge
}

const refused = (retryAfter: number, disconnect = false): Charge => ({
  accepted: false,
  disconnect,
  error: {
    code: 'RATE_LIMITED',
    message: disconnect ? 'Rate limit exceeded; disconnected' : 'Rate limit exceeded',
    retryAfter,
  },
})

describe('event limits', () => {
  it('when a connection sends its burst at once, then the next events are refused with retryAfter, and the 4th refusal closes it', () => {
    const { limits } = limited()
    const connection = {}
    for (let n = 0; n < 10; n++) expect(settled(limits.charge(connection, 'u'))).toEqual({ accepted: true })
    expect(settled(limits.charge(connection, 'u'))).toEqual(refused(1))
    expect(settled(limits.charge(connection, 'u'))).toEqual(refused(1))
    expect(settled(limits.charge(connection, 'u'))).toEqual(refused(1))
    expect(settled(limits.charge(connection, 'u'))).toEqual(refused(1, true))
  })

  it('when time passes, then the bucket refills at its rate; another connection has its own', () => {
    const { clock, limits } = limited()
    const [one, two] = [{}, {}]
    for (let n = 0; n < 10; n++) settled(limits.charge(one, 'u'))
    expect(settled(limits.charge(one, 'u')).accepted).toBe(false)
    expect(settled(limits.charge(two, 'v')).accepted).toBe(true)
    // 400 ms at 5 per second: two more
    clock.now += 400
    expect(settled(limits.charge(one, 'u')).accepted).toBe(true)
    expect(settled(limits.charge(one, 'u')).accepted).toBe(true)
    expect(settled(limits.charge(one, 'u')).accepted).toBe(false)
  })

  it('when a connection keeps sending over its rate, then its refusals add up to the disconnection; once it has kept under its rate until full, they are forgiven', () => {
    const { clock, limits } = limited()
    const steady = {}
    const forgiven = {}
    for (const connection of [steady, forgiven]) {
      for (let n = 0; n < 10; n++) settled(limits.charge(connection, 'u'))
      for (let n = 0; n < 3; n++) expect(settled(limits.charge(connection, 'u')).accepted).toBe(false)
    }
    // each 200 ms brings one event: the steady sender uses it and one more is refused, the bucket never fills
    clock.now += 200
    expect(settled(limits.charge(steady, 'u')).accepted).toBe(true)
    expect(settled(limits.charge(steady, 'u'))).toEqual(refused(1, true))
    // the other stays quiet for 2 s (10 events at 5 per second): full again, its 3 refusals forgiven
    clock.now += 2000
    for (let n = 0; n < 10; n++) expect(settled(limits.charge(forgiven, 'u')).accepted).toBe(true)
    for (let n = 0; n < 3; n++) expect(settled(limits.charge(forgiven, 'u'))).toEqual(refused(1))
    expect(settled(limits.charge(forgiven, 'u'))).toEqual(refused(1, true))
  })

  it("when the user's rate refuses an event, then it is refused with the rate's retryAfter and counts as a refusal; a user's first event of a window is answered once the rate has answered", async () => {
    const answers: (Taken | Promise<Taken>)[] = [
      Promise.resolve({ allowed: true }),
      { allowed: false, retryAfterSeconds: 7 },
      { allowed: false, retryAfterSeconds: 6 },
      { allowed: false, retryAfterSeconds: 5 },
      { allowed: false, retryAfterSeconds: 4 },
    ]
    const users: string[] = []
    const { limits } = limited({
      take(userId) {
        users.push(userId)
        return answers.shift() ?? { allowed: true }
      },
    })
    const connection = {}
    const first = limits.charge(connection, 'user-1')
    expect(first).toBeInstanceOf(Promise)
    expect(await first).toEqual({ accepted: true })
    expect(settled(limits.charge(connection, 'user-1'))).toEqual(refused(7))
    expect(settled(limits.charge(connection, 'user-1'))).toEqual(refused(6))
    expect(settled(limits.charge(connection, 'user-1'))).toEqual(refused(5))
    expect(settled(limits.charge(connection, 'user-1'))).toEqual(refused(4, true))
    expect(users).toEqual(['user-1', 'user-1', 'user-1', 'user-1', 'user-1'])
  })

  it("when the connection's bucket refuses, then the user's rate is not charged", () => {
    const users: string[] = []
    const { limits } = limited({
      take(userId) {
        users.push(userId)
        return { allowed: true }
      },
    })
    const connection = {}
    for (let n = 0; n < 12; n++) limits.charge(connection, 'u')
    expect(users).toHaveLength(10)
  })
})
