// The patched kafkajs request queue (patches/kafkajs@2.2.4.patch) on the real broker: a connected client with nothing
// to send arms no timers. Upstream, each connection re-armed a 1 ms timer for as long as it lived (kafkajs #1556,
// #1704): the largest part of an idle service's CPU.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventProducer } from '../src/kafka.ts'
import { testProducer } from './relay-fixtures.ts'

let producer: EventProducer

beforeAll(async () => {
  producer = await testProducer()
})

afterAll(async () => {
  await producer.disconnect()
})

/** How many timers this process arms while `ms` pass. */
async function timersArmedDuring(ms: number): Promise<number> {
  const original = globalThis.setTimeout
  let armed = 0
  const counting = ((...args: Parameters<typeof setTimeout>) => {
    armed += 1
    return original(...args)
  }) as typeof setTimeout
  globalThis.setTimeout = Object.assign(counting, original)
  try {
    await new Promise((resolve) => original(resolve, ms))
  } finally {
    globalThis.setTimeout = original
  }
  return armed
}

describe('an idle Kafka client', () => {
  it('when a connected producer has nothing to send, then its connections arm no timer of their own (upstream: one every millisecond)', async () => {
    // connected: the broker connection and its request queue exist and have answered requests
    const armed = await timersArmedDuring(1000)
    // upstream arms ~1000 a second per connection; what is left is the test runner's own
    expect(armed).toBeLessThan(50)
  })
})
