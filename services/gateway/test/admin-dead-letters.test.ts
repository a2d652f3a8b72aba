// /api/v1/admin/dead-letters on real Kafka: an admin sees the system's dead-letter topics (its KAFKA_NAMESPACE only,
// by their names without it), a topic's newest events, and replays its pending events; a replay already under way is
// a 409, anyone else is refused and changes nothing, a bad request is a 422 and a broker away a 503.
import { randomUUID } from 'node:crypto'
import { createEventProducer, type EventProducer } from '@meridian/events'
import {
  asAdmin,
  asUser,
  expectErrorEnvelope,
  infraEndpoints,
  namedTopics,
  scaledMs,
  type TestTopics,
  testKafka,
  tokenEnv,
  uniqueName,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, startGateway, type TestGateway } from './support/gateway.ts'

describe('gateway: /api/v1/admin/dead-letters', () => {
  const namespace = `${uniqueName('gwdlt')}.`
  const kafka = testKafka()
  let gateway: TestGateway
  let topics: TestTopics
  let producer: EventProducer
  const placed = [randomUUID(), randomUUID()]

  beforeAll(async () => {
    topics = await namedTopics([
      `${namespace}order.placed`,
      `${namespace}order.placed.dlt`,
      `${namespace}user.removed.dlt`,
      // not a topic of the system (no such event type): never listed, read or replayed
      `${namespace}scratch.dlt`,
    ])
    // parked as a consumer parks them: through the events package's idempotent producer (acks from every replica)
    producer = await createEventProducer(kafka)
    await producer.publish(
      placed.map((id, index) => ({
        topic: `${namespace}order.placed.dlt`,
        key: `key-${index}`,
        value: JSON.stringify({ id, type: 'order.placed', data: { index } }),
        headers: {
          'message-id': id,
          'original-topic': `${namespace}order.placed`,
          'consumer-group': `${namespace}widgets.order.placed`,
          'error-message': 'the widget store is down',
          'dead-lettered-at': `2026-11-24T09:00:0${index}.000Z`,
          'retry-count': '3',
        },
      })),
    )
    // the fixture is in place once the broker shows both parked messages
    let seen = 0
    await eventually(async () => {
      // a topic just made may not have its leader known yet ("not the leader for that topic-partition", retriable):
      // not yet, not a failure
      seen = await messagesIn('order.placed.dlt').catch((error: unknown) => {
        if ((error as { retriable?: boolean }).retriable) return seen
        throw error
      })
      return seen === 2
    }).catch((error: unknown) => {
      throw new Error(`the parked messages: the broker shows ${seen} of 2`, { cause: error })
    })
    gateway = await startGateway({
      routes: [],
      env: { ...tokenEnv, KAFKA_BROKERS: infraEndpoints().kafkaBrokers, KAFKA_NAMESPACE: namespace },
    })
  })

  afterAll(async () => {
    await gateway?.close()
    await producer?.disconnect()
    await topics?.delete()
  })

  const call = (method: 'GET' | 'POST', url: string, headers: Record<string, string>) =>
    gateway.app.inject({ method, url, headers })

  /** How many messages a topic of the namespace holds. */
  async function messagesIn(topic: string): Promise<number> {
    const admin = kafka.admin()
    await admin.connect()
    try {
      const offsets = await admin.fetchTopicOffsets(`${namespace}${topic}`)
      return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0)
    } finally {
      await admin.disconnect()
    }
  }
  const countOf = () => messagesIn('order.placed')

  it("when an admin lists the dead-letter topics, then the system's own in the namespace come, by their names without it, with their counts", async () => {
    const answer = await call('GET', '/api/v1/admin/dead-letters', asAdmin())
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({
      data: [
        { topic: 'order.placed.dlt', originalTopic: 'order.placed', total: 2, pending: 2 },
        { topic: 'user.removed.dlt', originalTopic: 'user.removed', total: 0, pending: 0 },
      ],
    })
  })

  it("when an admin reads a topic's events, then the newest come first with why they were parked; limit keeps the newest", async () => {
    const answer = await call('GET', '/api/v1/admin/dead-letters/order.placed.dlt/events', asAdmin())
    expect(answer.statusCode).toBe(200)
    const body = answer.json()
    expect(body.topic).toEqual({
      topic: 'order.placed.dlt',
      originalTopic: 'order.placed',
      total: 2,
      pending: 2,
    })
    expect(body.data).toEqual([
      {
        partition: expect.any(Number),
        offset: expect.stringMatching(/^\d+$/),
        key: 'key-1',
        eventId: placed[1],
        eventType: 'order.placed',
        originalTopic: 'order.placed',
        consumerGroup: 'widgets.order.placed',
        errorMessage: 'the widget store is down',
        deadLetteredAt: '2026-11-24T09:00:01.000Z',
        retryCount: 3,
        replayed: false,
        value: JSON.stringify({ id: placed[1], type: 'order.placed', data: { index: 1 } }),
      },
      expect.objectContaining({ eventId: placed[0], key: 'key-0', replayed: false }),
    ])

    const newest = await call('GET', '/api/v1/admin/dead-letters/order.placed.dlt/events?limit=1', asAdmin())
    expect(newest.json().data.map((e: { eventId: string }) => e.eventId)).toEqual([placed[1]])
  })

  it('when the topic or the limit is bad, then 422, 414 or 404 in the envelope', async () => {
    for (const limit of ['0', '201', 'many', '-1'])
      expectErrorEnvelope(
        await call('GET', `/api/v1/admin/dead-letters/order.placed.dlt/events?limit=${limit}`, asAdmin()),
        422,
        'VALIDATION_ERROR',
      )
    for (const topic of ['order.placed', '..%2F..%2Fetc.dlt', '%20.dlt', '-x.dlt'])
      expectErrorEnvelope(
        await call('GET', `/api/v1/admin/dead-letters/${topic}/events`, asAdmin()),
        422,
        'VALIDATION_ERROR',
      )
    expectErrorEnvelope(
      await call('GET', `/api/v1/admin/dead-letters/${'a'.repeat(120)}.dlt/events`, asAdmin()),
      414,
      'URI_TOO_LONG',
    )
    // a topic outside the namespace or the system, or none at all, is not found: another run's full name included
    for (const topic of ['nothing.here.dlt', 'scratch.dlt', `${namespace}order.placed.dlt`]) {
      expectErrorEnvelope(
        await call('GET', `/api/v1/admin/dead-letters/${topic}/events`, asAdmin()),
        404,
        'NOT_FOUND',
      )
      expectErrorEnvelope(
        await call('POST', `/api/v1/admin/dead-letters/${topic}/replay`, asAdmin()),
        404,
        'NOT_FOUND',
      )
    }
  })

  it('when anyone but an admin asks, then 401 or 403 and nothing is replayed', async () => {
    const user = asUser(randomUUID())
    for (const [method, url] of [
      ['GET', '/api/v1/admin/dead-letters'],
      ['GET', '/api/v1/admin/dead-letters/order.placed.dlt/events'],
      ['POST', '/api/v1/admin/dead-letters/order.placed.dlt/replay'],
    ] as const) {
      expectErrorEnvelope(await call(method, url, {}), 401, 'UNAUTHORIZED')
      expectErrorEnvelope(
        await call(method, url, { authorization: 'Bearer not-a-token' }),
        401,
        'UNAUTHORIZED',
      )
      expectErrorEnvelope(await call(method, url, user), 403, 'FORBIDDEN')
    }
    expect(await countOf()).toBe(0)
  })

  it('when a replay of the topic is under way, then another is a 409 and publishes nothing', async () => {
    const holder = kafka.consumer({ groupId: `${namespace}order.placed.dlt.replay` })
    let joined = false
    holder.on(holder.events.GROUP_JOIN, () => {
      joined = true
    })
    await holder.connect()
    try {
      await holder.subscribe({ topics: [`${namespace}order.placed.dlt`], fromBeginning: true })
      await holder.run({ autoCommit: false, eachMessage: async () => {} })
      await eventually(() => joined)
      const refused = await call('POST', '/api/v1/admin/dead-letters/order.placed.dlt/replay', asAdmin())
      expect(expectErrorEnvelope(refused, 409, 'CONFLICT').message).toBe(
        'A replay of order.placed.dlt is already under way; try again when it is done',
      )
      expect(await countOf()).toBe(0)
    } finally {
      await holder.disconnect()
    }
  })

  it('when an admin replays, then the pending events go back to their topic and are marked replayed; again, nothing more goes', async () => {
    const answer = await call('POST', '/api/v1/admin/dead-letters/order.placed.dlt/replay', asAdmin())
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({
      topic: { topic: 'order.placed.dlt', originalTopic: 'order.placed', total: 2, pending: 0 },
      replayed: 2,
      to: { 'order.placed': 2 },
    })
    expect(await countOf()).toBe(2)
    const events = await call('GET', '/api/v1/admin/dead-letters/order.placed.dlt/events', asAdmin())
    expect(events.json().data.map((e: { replayed: boolean }) => e.replayed)).toEqual([true, true])
    const logged = gateway.logs.find((line) => line.msg === 'dead-lettered events replayed by an admin')
    expect(logged).toMatchObject({ topic: 'order.placed.dlt', replayed: 2, requestId: expect.any(String) })
    const trail = await call('GET', '/api/v1/admin/audit/gateway?action=dead_letters.replayed', asAdmin())
    expect(trail.json().data).toEqual([
      expect.objectContaining({
        action: 'dead_letters.replayed',
        target: 'topic:order.placed.dlt',
        detail: { replayed: 2, to: { 'order.placed': 2 } },
        requestId: answer.headers['x-request-id'],
      }),
    ])

    const again = await call('POST', '/api/v1/admin/dead-letters/order.placed.dlt/replay', asAdmin())
    expect(again.json()).toMatchObject({ replayed: 0, to: {} })
    expect(await countOf()).toBe(2)
  })
})

describe('gateway: /api/v1/admin/dead-letters with Kafka away', () => {
  let gateway: TestGateway
  beforeAll(async () => {
    gateway = await startGateway({ routes: [], env: { ...tokenEnv, KAFKA_BROKERS: '127.0.0.1:1' } })
  })
  afterAll(() => gateway?.close())

  it(
    'when the broker cannot be reached, then 503 with Retry-After, never a 500',
    async () => {
      const answer = await gateway.app.inject({
        method: 'GET',
        url: '/api/v1/admin/dead-letters',
        headers: asAdmin(),
      })
      expect(answer.headers['retry-after']).toBe('5')
      expect(expectErrorEnvelope(answer, 503, 'SERVICE_UNAVAILABLE').message).toBe('Kafka is unavailable')
    },
    scaledMs(30_000),
  )
})
