// The streams adapter's SUBSCRIBE on a client it duplicates, cut short by the app's close: observed, not an unhandled
// rejection (observeSubscriptions in src/app.ts), on the real Redis.
import type { FastifyBaseLogger } from 'fastify'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { observeSubscriptions } from '../src/app.ts'

describe("the adapter's subscriptions", () => {
  it('when a duplicate is closed before its SUBSCRIBE is answered, then the refusal is observed and still reaches a caller that awaits it', async () => {
    const unhandled: unknown[] = []
    const record = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', record)
    const base = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true })
    try {
      const logged: string[] = []
      const log = { debug: (_details: unknown, message: string) => logged.push(message) }
      observeSubscriptions(base, log as unknown as FastifyBaseLogger)
      const dropped = base.duplicate()
      dropped.on('error', () => {})
      // the adapter's way: the promise dropped, the client disconnected before Redis answers
      void dropped.subscribe('adapter-test#/#')
      dropped.disconnect()
      const awaited = base.duplicate()
      awaited.on('error', () => {})
      const subscribing = awaited.subscribe('adapter-test#/#')
      awaited.disconnect()
      await expect(subscribing).rejects.toThrow(/Connection is closed/)
      // unhandled rejections are reported after the microtasks of the turn that made them
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(unhandled).toEqual([])
      expect(logged).toEqual([
        'realtime adapter: a subscription was not made',
        'realtime adapter: a subscription was not made',
      ])
    } finally {
      process.off('unhandledRejection', record)
      base.disconnect()
    }
  })
})
