// scheduleRounds: a service's own clock, started with the app and stopped before it closes.
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { scheduleRounds } from '../src/rounds.ts'

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('scheduleRounds', () => {
  it('when the app is ready, then rounds run one after another; a failed round does not stop the next; after close none runs', async () => {
    const app = Fastify()
    let rounds = 0
    let concurrent = 0
    let mostConcurrent = 0
    scheduleRounds(app, {
      name: 'test rounds',
      intervalMs: 10,
      round: async () => {
        rounds += 1
        concurrent += 1
        mostConcurrent = Math.max(mostConcurrent, concurrent)
        await wait(15)
        concurrent -= 1
        if (rounds === 2) throw new Error('a failing round')
        return rounds
      },
    })
    await wait(50)
    expect(rounds).toBe(0)
    await app.ready()
    await wait(200)
    expect(rounds).toBeGreaterThanOrEqual(4)
    expect(mostConcurrent).toBe(1)
    await app.close()
    const afterClose = rounds
    expect(concurrent).toBe(0)
    await wait(100)
    expect(rounds).toBe(afterClose)
  })
})
