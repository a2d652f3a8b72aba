// Tracing not registered (no SDK: the API's no-op tracer and propagator): nothing is stored, nothing fails, and a
// context another process stored or sent travels on unchanged.
import { transaction } from '@meridian/db'
import { uniqueName } from '@meridian/testkit'
import { trace } from '@opentelemetry/api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DomainEvent } from '../src/envelope.ts'
import type { EventProducer } from '../src/kafka.ts'
import { appendToOutbox } from '../src/outbox.ts'
import {
  applyEffect,
  type EffectsDatabase,
  type EventTopics,
  eventKafka,
  readTopics,
  waitFor,
} from './consumer-fixtures.ts'
import { testEvent } from './relay-fixtures.ts'
import { type RelayedTopic, relayedTopic } from './relayed-topic.ts'

let relayed: RelayedTopic
let database: EffectsDatabase
let topics: EventTopics
let producer: EventProducer
/** whether each event's handler saw a recording span, by event id */
const recording = new Map<string, boolean>()
let failuresLeft = 0

/** another process's context: a traced writer, or a traced producer upstream */
const foreignParent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'

beforeAll(async () => {
  relayed = await relayedTopic('untraced')
  ;({ database, topics, producer } = relayed)
  await relayed.startConsumer(
    'untraced-group',
    async (event, tx) => {
      recording.set(event.id, trace.getActiveSpan()?.isRecording() ?? false)
      if (failuresLeft > 0) {
        failuresLeft--
        throw new Error('failed once on purpose')
      }
      await applyEffect(tx, event)
    },
    { retryDelaysMs: [50] },
  )
})

afterAll(() => relayed?.close())

const topicEvent = (): DomainEvent => testEvent(topics.topic, { key: uniqueName('k') })

async function messageOf(topic: string, eventId: string) {
  return waitFor(`the message of ${eventId} on ${topic}`, async () =>
    (await readTopics(eventKafka(), [topic])).find((each) => each.value?.includes(eventId)),
  )
}

describe('tracing not registered', () => {
  it('when an event is appended inside a span of the no-op tracer, then nothing is stored or sent, and the handler runs without a recording span', async () => {
    const event = topicEvent()
    await trace.getTracer('untraced-test').startActiveSpan('use case', async (span) => {
      await transaction(database.sql, (tx) => appendToOutbox(tx, event, { aggregateId: 'a' }))
      span.end()
    })
    const [row] =
      await database.sql`select trace_parent, trace_state from outbox where payload->>'id' = ${event.id}`
    expect(row).toEqual({ trace_parent: null, trace_state: null })

    await waitFor('the effect', async () => (await database.effectCounts()).get(event.id) === 1)
    expect(recording.get(event.id)).toBe(false)
    const message = await messageOf(topics.topic, event.id)
    expect(message.headers.traceparent).toBeUndefined()
  })

  it('when a row holds a context another writer stored, then the relay sends it on as it was', async () => {
    const event = topicEvent()
    await database.sql`
      insert into outbox (event_type, aggregate_id, payload, trace_parent, trace_state)
      values (${event.type}, 'b', ${JSON.stringify(event)}::jsonb, ${foreignParent}, 'vendor=x')`
    await database.sql`select pg_notify('meridian_outbox', '')`
    const message = await messageOf(topics.topic, event.id)
    expect(message.headers.traceparent).toBe(foreignParent)
    expect(message.headers.tracestate).toBe('vendor=x')
  })

  it('when a traced message fails once, then its retry carries the trace headers it came with', async () => {
    const event = topicEvent()
    failuresLeft = 1
    await producer.publish([
      {
        topic: topics.topic,
        key: 'c',
        value: JSON.stringify(event),
        headers: { 'message-id': event.id, traceparent: foreignParent },
      },
    ])
    await waitFor(
      'the effect after the retry',
      async () => (await database.effectCounts()).get(event.id) === 1,
    )
    const retried = await messageOf(topics.retry(1), event.id)
    expect(retried.headers.traceparent).toBe(foreignParent)
  })
})
