// The synced Redis counter outside HTTP (what the realtime channel counts a user's events with): counted locally,
// settled with Redis in batches, so that two instances see each other's counts within a sync interval.
import { randomUUID } from 'node:crypto'
import { eventually, freshRedis, type TestRedis } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SyncedCount, type SyncedRedisCounter, syncedRedisCounter } from '../src/index.ts'

/** Counts one action; `sync` tells whether the answer came before incr returned. */
function count(counter: SyncedRedisCounter, key: string): Promise<SyncedCount & { sync: boolean }> {
  return new Promise((resolve, reject) => {
    let returned = false
    counter.incr(key, (error, counted) => {
      if (error || !counted) reject(error ?? new Error('no count'))
      else resolve({ ...counted, sync: !returned })
    })
    returned = true
  })
}

describe('synced Redis counter', () => {
  let store: TestRedis
  let one: SyncedRedisCounter
  let two: SyncedRedisCounter

  beforeAll(() => {
    store = freshRedis('synced-counter')
    const options = { redis: store.redis, keyPrefix: 'events:', syncIntervalMs: 50, timeWindowMs: 10_000 }
    // two instances of a service: two counters on one Redis
    one = syncedRedisCounter(options)
    two = syncedRedisCounter(options)
  })
  afterAll(async () => {
    await store.cleanup()
  })

  it("when a key's first action of a window is counted, then Redis is asked first; the next ones are answered at once", async () => {
    const key = randomUUID()
    const first = await count(one, key)
    expect(first).toMatchObject({ current: 1, sync: false })
    expect(first.ttl).toBeGreaterThan(9000)
    expect(await count(one, key)).toMatchObject({ current: 2, sync: true })
    expect(await count(one, key)).toMatchObject({ current: 3, sync: true })
  })

  it('when one key is counted on two instances, then each counts the other’s actions once they have settled', async () => {
    const key = randomUUID()
    for (let n = 0; n < 3; n++) await count(one, key)
    await eventually(
      'instance one has settled its count with Redis',
      async () => {
        return Number(await store.redis.get(`events:${key}`)) === 3
      },
      undefined,
      20,
    )
    // the second instance's first action of the window starts from what Redis holds
    expect((await count(two, key)).current).toBe(4)
    // instance one's own actions, and the other's one once its settlement has reached it
    let own = 3
    await eventually(
      'instance one counts the other’s action',
      async () => {
        own += 1
        return (await count(one, key)).current === own + 1
      },
      undefined,
      60,
    )
  })
})
