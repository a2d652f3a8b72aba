// Redis is a real server: values with expiry, pub/sub between two connections, per-file key prefixes.
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { freshRedis, infraEndpoints, uniqueName } from '../src/index.ts'

describe('redis smoke', () => {
  const { redis, prefix, cleanup } = freshRedis('smoke')

  afterAll(async () => {
    await cleanup()
  })

  it('when a value is set with an expiry, then it is read back with a positive TTL under the file prefix', async () => {
    await redis.set('greeting', 'hello', 'EX', 60)
    expect(await redis.get('greeting')).toBe('hello')
    expect(await redis.ttl('greeting')).toBeGreaterThan(0)

    const raw = new Redis(infraEndpoints().redisUrl)
    try {
      expect(await raw.get(`${prefix}greeting`)).toBe('hello')
      expect(await raw.get('greeting')).toBeNull()
    } finally {
      raw.disconnect()
    }
  })

  it('when one connection publishes on a channel, then a subscribed connection receives the message', async () => {
    const channel = uniqueName('smoke-channel')
    const subscriber = new Redis(infraEndpoints().redisUrl)
    const publisher = new Redis(infraEndpoints().redisUrl)
    try {
      const received = new Promise<{ channel: string; message: string }>((resolve) => {
        subscriber.on('message', (from: string, message: string) => resolve({ channel: from, message }))
      })
      await subscriber.subscribe(channel)
      expect(await publisher.publish(channel, 'order.placed')).toBe(1)
      await expect(received).resolves.toEqual({ channel, message: 'order.placed' })
    } finally {
      subscriber.disconnect()
      publisher.disconnect()
    }
  })

  it('when the file cleans up, then its keys are gone', async () => {
    const own = freshRedis('cleanup')
    await own.redis.set('a', '1')
    await own.redis.set('b', '2')
    await own.cleanup()
    const raw = new Redis(infraEndpoints().redisUrl)
    try {
      expect(await raw.keys(`${own.prefix}*`)).toEqual([])
    } finally {
      raw.disconnect()
    }
  })
})
