// The spec's reconnection schedule, and the Manager options each policy becomes.
import { describe, expect, it } from 'vitest'
import { createRealtimeClient, reconnectDelay, reconnectionPolicies } from '../src/index.ts'

const spec = { initial: 1000, max: 5000, factor: 0.5 }
const middle = () => 0.5

describe('reconnectDelay', () => {
  it('when the jitter is neutral, then the delay doubles from the initial delay up to the maximum', () => {
    const delays = [0, 1, 2, 3, 4, 10].map((attempt) => reconnectDelay(attempt, spec, middle))
    expect(delays).toEqual([1000, 2000, 4000, 5000, 5000, 5000])
    expect(reconnectDelay(5, { ...spec, max: 30_000 }, middle)).toBe(30_000)
    expect(reconnectDelay(6, { ...spec, max: 30_000 }, middle)).toBe(30_000)
  })

  it('when the random draw is at its extremes, then the delay is scaled by 1 - factor and 1 + factor', () => {
    expect(reconnectDelay(1, spec, () => 0)).toBe(1000)
    expect(reconnectDelay(1, spec, () => 1)).toBe(3000)
    expect(reconnectDelay(3, spec, () => 0)).toBe(2500)
    expect(reconnectDelay(3, spec, () => 1)).toBe(7500)
  })

  it('when drawn with Math.random, then every delay stays within min(initial * 2^attempt, max) * (1 ± factor)', () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const base = Math.min(1000 * 2 ** attempt, 30_000)
      for (let draw = 0; draw < 200; draw++) {
        const delay = reconnectDelay(attempt, { ...spec, max: 30_000 })
        expect(delay).toBeGreaterThanOrEqual(base * 0.5)
        expect(delay).toBeLessThanOrEqual(base * 1.5)
      }
    }
  })

  it('when the attempt is negative or fractional, or the factor is outside [0, 1], then it throws a RangeError', () => {
    expect(() => reconnectDelay(-1, spec)).toThrow(RangeError)
    expect(() => reconnectDelay(1.5, spec)).toThrow(RangeError)
    expect(() => reconnectDelay(1, { ...spec, factor: 2 })).toThrow(RangeError)
  })
})

describe('reconnection policies on the Manager', () => {
  const managerOf = (reconnection?: 'default' | 'persistent' | false) =>
    createRealtimeClient({
      url: 'http://127.0.0.1:9',
      ...(reconnection === undefined ? {} : { reconnection }),
    }).manager

  it('when no policy is given, then the Manager gets the default: 10 attempts, 1000 ms initial, 5000 ms max, 0.5', () => {
    const manager = managerOf()
    expect(manager.reconnection()).toBe(true)
    expect(manager.reconnectionAttempts()).toBe(10)
    expect(manager.reconnectionDelay()).toBe(1000)
    expect(manager.reconnectionDelayMax()).toBe(5000)
    expect(manager.randomizationFactor()).toBe(0.5)
  })

  it('when the policy is persistent, then the Manager retries forever, 1000 ms initial, 30000 ms max, 0.5', () => {
    const manager = managerOf('persistent')
    expect(manager.reconnection()).toBe(true)
    expect(manager.reconnectionAttempts()).toBe(Number.POSITIVE_INFINITY)
    expect(manager.reconnectionDelay()).toBe(1000)
    expect(manager.reconnectionDelayMax()).toBe(30_000)
    expect(manager.randomizationFactor()).toBe(0.5)
  })

  it('when reconnection is false, then the Manager does not reconnect', () => {
    expect(managerOf(false).reconnection()).toBe(false)
  })

  it('when created, then the Manager uses the websocket transport on the engine path and does not connect yet', () => {
    const manager = managerOf()
    expect(manager.opts.transports).toEqual(['websocket'])
    expect(manager.opts.path).toBe('/socket.io/')
    expect(manager._readyState).toBe('closed')
  })

  it('when the policies are read, then they are the spec values', () => {
    expect(reconnectionPolicies).toEqual({
      default: { attempts: 10, initialDelayMs: 1000, maxDelayMs: 5000, randomizationFactor: 0.5 },
      persistent: {
        attempts: Number.POSITIVE_INFINITY,
        initialDelayMs: 1000,
        maxDelayMs: 30_000,
        randomizationFactor: 0.5,
      },
    })
  })
})
