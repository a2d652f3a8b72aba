// Kafka is a real broker and behaves as Meridian's event backbone needs: keys, headers, 3 partitions,
// one consumer group sharing them, per-key order kept.
import type { Consumer, EachMessagePayload } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshTopics, type TestTopics, testKafka, uniqueName } from '../src/index.ts'

interface Received {
  consumer: string
  partition: number
  key: string
  sequence: number
  messageId: string
}

const keys = Array.from({ length: 12 }, (_, i) => `order-${i}`)
const perKey = 20

describe('kafka smoke', () => {
  let topics: TestTopics
  const consumers: Consumer[] = []

  beforeAll(async () => {
    topics = await freshTopics(['smoke.keyed'])
  })

  afterAll(async () => {
    await Promise.all(consumers.map((consumer) => consumer.disconnect()))
    await topics?.delete()
  })

  it('when keyed messages with headers go to a 3-partition topic read by one group of two consumers, then each arrives once, in order per key, with its headers', async () => {
    const topic = topics.names['smoke.keyed']!
    const group = uniqueName('smoke-group')
    const received: Received[] = []
    const assignments = new Map<string, number[]>()

    for (const name of ['consumer-a', 'consumer-b']) {
      const consumer = testKafka(name).consumer({
        groupId: group,
        sessionTimeout: 10_000,
        heartbeatInterval: 500,
      })
      consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        assignments.set(name, payload.memberAssignment[topic] ?? [])
      })
      await consumer.connect()
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({
        eachMessage: async ({ partition, message }: EachMessagePayload) => {
          received.push({
            consumer: name,
            partition,
            key: message.key?.toString() ?? '',
            sequence: Number(message.value?.toString()),
            messageId: message.headers?.['message-id']?.toString() ?? '',
          })
        },
      })
      consumers.push(consumer)
    }

    // the group is stable once both members hold disjoint shares of all three partitions
    await expect
      .poll(
        () => {
          const owned = [...assignments.values()]
          return owned.length === 2 && owned.every((p) => p.length > 0) ? owned.flat().sort() : []
        },
        { interval: 200 },
      )
      .toEqual([0, 1, 2])

    const producer = testKafka().producer({ idempotent: true, maxInFlightRequests: 5 })
    await producer.connect()
    try {
      for (let sequence = 0; sequence < perKey; sequence++) {
        await producer.send({
          topic,
          acks: -1,
          messages: keys.map((key) => ({
            key,
            value: String(sequence),
            headers: { 'message-id': `${key}-${sequence}` },
          })),
        })
      }
    } finally {
      await producer.disconnect()
    }

    await expect.poll(() => received.length, { interval: 100 }).toBe(keys.length * perKey)

    // exactly once each, with the header the producer set
    expect(new Set(received.map((r) => r.messageId)).size).toBe(keys.length * perKey)
    for (const r of received) expect(r.messageId).toBe(`${r.key}-${r.sequence}`)
    // a key stays on one partition, and its messages arrive in the order they were sent
    for (const key of keys) {
      const ofKey = received.filter((r) => r.key === key)
      expect(new Set(ofKey.map((r) => r.partition)).size).toBe(1)
      expect(ofKey.map((r) => r.sequence)).toEqual(Array.from({ length: perKey }, (_, i) => i))
    }
    // the keys spread over all three partitions, and both members of the group did work
    expect(new Set(received.map((r) => r.partition))).toEqual(new Set([0, 1, 2]))
    expect(new Set(received.map((r) => r.consumer))).toEqual(new Set(['consumer-a', 'consumer-b']))
  })

  it('when a topic is not declared, then producing to it fails because automatic topic creation is off', async () => {
    const producer = testKafka().producer({ retry: { retries: 1 } })
    await producer.connect()
    try {
      await expect(
        producer.send({ topic: uniqueName('undeclared'), messages: [{ value: 'x' }] }),
      ).rejects.toThrow()
    } finally {
      await producer.disconnect()
    }
  })
})
