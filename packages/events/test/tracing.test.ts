// One trace through the outbox and Kafka, on real PostgreSQL and Kafka with an in-memory span exporter: the context
// stored with the row, the relay's publish span and headers, the consumer's process span, retries and dead letters.
import { transaction } from '@meridian/db'
import {
  attributeOf,
  installTestTracing,
  parentIdOf,
  type TestTracing,
  testKafka,
  traceparentOf,
  uniqueName,
} from '@meridian/testkit'
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { EventHandler } from '../src/consumer.ts'
import type { DomainEvent } from '../src/envelope.ts'
import type { EventProducer } from '../src/kafka.ts'
import { appendToOutbox } from '../src/outbox.ts'
import { replayDeadLetters } from '../src/replay.ts'
import {
  applyEffect,
  type EffectsDatabase,
  type EventTopics,
  eventKafka,
  readTopics,
  recordingLogger,
  waitFor,
} from './consumer-fixtures.ts'
import { testEvent } from './relay-fixtures.ts'
import { type RelayedTopic, relayedTopic } from './relayed-topic.ts'

let tracing: TestTracing
let relayed: RelayedTopic
let database: EffectsDatabase
let topics: EventTopics
let producer: EventProducer
const tracer = () => trace.getTracer('tracing-test')

beforeAll(async () => {
  tracing = installTestTracing()
  relayed = await relayedTopic('trace')
  ;({ database, topics, producer } = relayed)
})

afterEach(() => relayed.stopConsumers())

afterAll(async () => {
  await relayed?.close()
  await tracing?.uninstall()
})

/** An event of the test topic (the relay publishes an event to the topic named by its type). */
const topicEvent = (data: Record<string, unknown>): DomainEvent => testEvent(topics.topic, data)

const startConsumer = (
  handler: EventHandler<'order.completed'>,
  options: { retryDelaysMs?: number[]; afterCommit?: (event: DomainEvent) => void } = {},
): Promise<string> => relayed.startConsumer('trace-group', handler, options)

/** Appends `event` in a transaction of its own, inside the active span if any. */
function append(event: DomainEvent): Promise<unknown> {
  return transaction(database.sql, (tx) => appendToOutbox(tx, event, { aggregateId: String(event.data.key) }))
}

async function outboxRow(eventId: string) {
  const [row] = await database.sql<{ traceParent: string | null; traceState: string | null }[]>`
    select trace_parent as "traceParent", trace_state as "traceState" from outbox where payload->>'id' = ${eventId}`
  return row
}

/** The process spans of one event (by its id), in the order they ended. */
const processSpansOf = (eventId: string): ReadableSpan[] =>
  tracing
    .spans()
    .filter(
      (span) => span.kind === SpanKind.CONSUMER && attributeOf(span, 'messaging.message.id') === eventId,
    )

const publishSpanOf = (eventId: string): ReadableSpan | undefined =>
  tracing
    .spans()
    .find((span) => span.kind === SpanKind.PRODUCER && attributeOf(span, 'messaging.message.id') === eventId)

describe('a trace through the outbox and Kafka', () => {
  it('when an event is appended inside a span, then its row, its message and the consumer span continue that trace, and the handler’s own work and events stay in it', async () => {
    const key = uniqueName('order')
    const next = topicEvent({ key, hop: 2 })
    await startConsumer(async (event, tx) => {
      await applyEffect(tx, event)
      // the handler's own span and its outbox append belong to the delivery's trace
      await tracer().startActiveSpan('handler work', async (span) => span.end())
      if ((event.data as Record<string, unknown>).hop === 1)
        await appendToOutbox(tx, next, { aggregateId: key })
    })

    const first = topicEvent({ key, hop: 1 })
    const request = tracer().startSpan('POST /orders', { kind: SpanKind.SERVER })
    // the request span active, as the HTTP instrumentation makes it, and the use case's span within it
    await context.with(trace.setSpan(context.active(), request), () =>
      tracer().startActiveSpan('use case', async (useCase) => {
        await append(first)
        useCase.end()
      }),
    )
    request.end()
    const useCase = tracing.spans().find((span) => span.name === 'use case')
    if (!useCase) throw new Error('no use case span')
    const traceId = request.spanContext().traceId

    // the row holds the context active at append time
    expect((await outboxRow(first.id))?.traceParent).toBe(traceparentOf(useCase.spanContext()))

    // each span is recorded when it ends, and a publish span ends when the broker's acknowledgement reaches the relay,
    // which may come after the consumer has fetched the message and handled it: every span of the chain is waited for
    const [firstPublish, firstProcess, secondPublish, secondProcess] = await waitFor(
      'every span of the chain',
      () => {
        const chain = [
          publishSpanOf(first.id),
          processSpansOf(first.id)[0],
          publishSpanOf(next.id),
          processSpansOf(next.id)[0],
        ]
        return chain.every((span) => span !== undefined) ? (chain as ReadableSpan[]) : undefined
      },
    )
    if (!firstPublish || !firstProcess || !secondPublish || !secondProcess)
      throw new Error('a span of the chain is missing')

    // use case → publish → process → (handler's append) → publish → process, one trace, each the child of the last
    for (const span of [firstPublish, firstProcess, secondPublish, secondProcess])
      expect(span.spanContext().traceId).toBe(traceId)
    expect(parentIdOf(firstPublish)).toBe(useCase.spanContext().spanId)
    expect(parentIdOf(firstProcess)).toBe(firstPublish.spanContext().spanId)
    expect(parentIdOf(secondPublish)).toBe(firstProcess.spanContext().spanId)
    expect(parentIdOf(secondProcess)).toBe(secondPublish.spanContext().spanId)
    expect((await outboxRow(next.id))?.traceParent).toBe(traceparentOf(firstProcess.spanContext()))

    const work = tracing
      .spans()
      .filter(
        (span) => span.name === 'handler work' && parentIdOf(span) === firstProcess.spanContext().spanId,
      )
    expect(work).toHaveLength(1)

    expect(firstPublish.name).toBe(`${topics.topic} publish`)
    expect(firstPublish.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.destination.name': topics.topic,
      'messaging.message.id': first.id,
    })
    expect(firstProcess.name).toBe(`${topics.topic} process`)
    expect(firstProcess.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.destination.name': topics.topic,
      'messaging.message.id': first.id,
      'meridian.event.type': topics.topic,
      'meridian.delivery.attempt': 1,
    })
    expect(firstProcess.attributes['messaging.consumer.group.name']).toMatch(/^trace-group/)
    expect(typeof firstProcess.attributes['messaging.kafka.offset']).toBe('number')
    expect(typeof firstProcess.attributes['messaging.destination.partition.id']).toBe('string')
    expect(firstProcess.status.code).not.toBe(SpanStatusCode.ERROR)

    // the message on Kafka names the publish span
    const messages = await readTopics(eventKafka(), [topics.topic])
    const message = messages.find((each) => each.value?.includes(first.id))
    expect(message?.headers.traceparent).toBe(traceparentOf(firstPublish.spanContext()))
  })

  it('when an event is appended outside any span, then its row and message carry no trace context and the consumer starts a root span', async () => {
    await startConsumer(async (event, tx) => applyEffect(tx, event))
    const event = topicEvent({ key: uniqueName('untraced') })
    await append(event)
    expect(await outboxRow(event.id)).toEqual({ traceParent: null, traceState: null })

    const process = await waitFor('the process span', () => processSpansOf(event.id)[0])
    expect(parentIdOf(process)).toBeUndefined()
    expect(publishSpanOf(event.id)).toBeUndefined()
    const messages = await readTopics(eventKafka(), [topics.topic])
    const message = messages.find((each) => each.value?.includes(event.id))
    expect(message).toBeDefined()
    expect(message?.headers.traceparent).toBeUndefined()
    expect(message?.headers.tracestate).toBeUndefined()
  })

  it('when a handler fails every attempt, then each attempt’s span records the error, the retry and the dead letter, and the dead letter’s replay continues the trace', async () => {
    let failing = true
    await startConsumer(
      async (event, tx) => {
        if (failing) throw new Error('the handler failed on purpose')
        await applyEffect(tx, event)
      },
      { retryDelaysMs: [100] },
    )
    const event = topicEvent({ key: uniqueName('doomed') })
    const origin = tracer().startSpan('origin')
    const originContext = origin.spanContext()
    origin.end()
    await producer.publish([
      {
        topic: topics.topic,
        key: String(event.data.key),
        value: JSON.stringify(event),
        headers: {
          'message-id': event.id,
          traceparent: traceparentOf(originContext),
          tracestate: 'vendor=a1',
        },
      },
    ])

    const [first, second] = await waitFor('two attempts', () => {
      const spans = processSpansOf(event.id)
      return spans.length >= 2 ? spans : undefined
    })
    if (!first || !second) throw new Error('missing attempts')
    expect(parentIdOf(first)).toBe(originContext.spanId)
    expect(first.spanContext().traceId).toBe(originContext.traceId)
    expect(first.spanContext().traceState?.get('vendor')).toBe('a1')
    expect(first.status.code).toBe(SpanStatusCode.ERROR)
    expect(first.events.map((each) => each.name)).toEqual(['exception', 'retry'])
    expect(first.events[1]?.attributes).toMatchObject({
      'meridian.retry.attempt': 2,
      'meridian.retry.delay_ms': 100,
      'meridian.retry.topic': topics.retry(1),
    })
    // the retry continues from the failed attempt
    expect(parentIdOf(second)).toBe(first.spanContext().spanId)
    expect(second.attributes['meridian.delivery.attempt']).toBe(2)
    expect(second.attributes['messaging.destination.name']).toBe(topics.retry(1))
    expect(second.status.code).toBe(SpanStatusCode.ERROR)
    expect(second.events.map((each) => each.name)).toEqual(['exception', 'dead-lettered'])
    expect(second.events[1]?.attributes).toMatchObject({
      'meridian.dead_letter.topic': topics.dlt,
      'meridian.dead_letter.reason': 'retries-exhausted',
    })

    const [retried] = (await readTopics(eventKafka(), [topics.retry(1)])).filter((m) =>
      m.value?.includes(event.id),
    )
    expect(retried?.headers.traceparent).toBe(traceparentOf(first.spanContext()))
    expect(retried?.headers.tracestate).toBe('vendor=a1')
    const [parked] = (await readTopics(eventKafka(), [topics.dlt])).filter((m) => m.value?.includes(event.id))
    expect(parked?.headers.traceparent).toBe(traceparentOf(second.spanContext()))

    failing = false
    await replayDeadLetters({ kafka: eventKafka(), topic: topics.dlt, logger: recordingLogger().logger })
    const replayed = await waitFor('the replayed delivery', () => processSpansOf(event.id)[2])
    expect(parentIdOf(replayed)).toBe(second.spanContext().spanId)
    expect(replayed.spanContext().traceId).toBe(originContext.traceId)
    expect(replayed.status.code).not.toBe(SpanStatusCode.ERROR)
  })

  it('when a consumer has an afterCommit hook, then it runs inside the event’s process span', async () => {
    const activeSpans = new Map<string, string | undefined>()
    await startConsumer(async (event, tx) => applyEffect(tx, event), {
      afterCommit: (event) => activeSpans.set(event.id, trace.getActiveSpan()?.spanContext().spanId),
    })
    const event = topicEvent({ key: uniqueName('after-commit') })
    await tracer().startActiveSpan('use case', async (span) => {
      await append(event)
      span.end()
    })
    const process = await waitFor('the process span', () => processSpansOf(event.id)[0])
    expect(activeSpans.get(event.id)).toBe(process.spanContext().spanId)
  })

  it('when a message is not an event, then its process span records why and the dead letter keeps its trace', async () => {
    await startConsumer(async (event, tx) => applyEffect(tx, event))
    const origin = tracer().startSpan('origin')
    origin.end()
    const messageId = uniqueName('garbage')
    await producer.publish([
      {
        topic: topics.topic,
        key: messageId,
        value: 'not json',
        headers: { 'message-id': messageId, traceparent: traceparentOf(origin.spanContext()) },
      },
    ])
    const span = await waitFor('the span of the invalid message', () =>
      tracing.spans().find((each) => parentIdOf(each) === origin.spanContext().spanId),
    )
    expect(span.status.code).toBe(SpanStatusCode.ERROR)
    expect(span.events.map((each) => each.name)).toEqual(['exception', 'dead-lettered'])
    expect(span.events[1]?.attributes?.['meridian.dead_letter.reason']).toBe('invalid-event')
  })
})

describe('hostile trace headers', () => {
  it('when trace headers are malformed, huge or not UTF-8, then the event is handled in a new root span and a huge tracestate is dropped', async () => {
    await startConsumer(async (event, tx) => applyEffect(tx, event))
    const valid = tracer().startSpan('origin')
    valid.end()
    const cases: { name: string; headers: Record<string, string | Buffer>; parent?: string }[] = [
      { name: 'bad format', headers: { traceparent: 'zz-not-a-trace-parent' } },
      { name: 'all zero ids', headers: { traceparent: `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01` } },
      { name: '10 kB', headers: { traceparent: `00-${'a'.repeat(10_000)}` } },
      { name: 'not UTF-8', headers: { traceparent: Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28]) } },
      {
        name: 'huge tracestate',
        headers: { traceparent: traceparentOf(valid.spanContext()), tracestate: `v=${'b'.repeat(10_000)}` },
        parent: valid.spanContext().spanId,
      },
    ]
    const raw = testKafka().producer()
    await raw.connect()
    const events = cases.map(({ name }) => topicEvent({ key: uniqueName(name.replaceAll(' ', '-')) }))
    try {
      await raw.send({
        topic: topics.topic,
        messages: cases.map(({ headers }, i) => {
          const event = events[i] as DomainEvent
          return {
            key: String(event.data.key),
            value: JSON.stringify(event),
            headers: { 'message-id': event.id, ...headers },
          }
        }),
      })
    } finally {
      await raw.disconnect()
    }
    for (const [i, { name, parent }] of cases.entries()) {
      const event = events[i] as DomainEvent
      const span = await waitFor(`the span of '${name}'`, () => processSpansOf(event.id)[0])
      expect(parentIdOf(span), name).toBe(parent)
      expect(span.status.code, name).not.toBe(SpanStatusCode.ERROR)
      if (parent) expect(span.spanContext().traceState, name).toBeUndefined()
    }
    const counts = await database.effectCounts()
    for (const event of events) expect(counts.get(event.id)).toBe(1)
  })
})

describe('the stored context', () => {
  it('when the active tracestate is longer than 512 characters, then the row keeps the traceparent and at most 512 characters of whole tracestate entries', async () => {
    const members = Array.from({ length: 20 }, (_, i) => `v${i}=${'c'.repeat(40)}`).join(',')
    const remote = propagation.extract(ROOT_CONTEXT, {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: members,
    })
    const event = topicEvent({ key: uniqueName('long-state') })
    await context.with(remote, () =>
      tracer().startActiveSpan('use case', async (span) => {
        await append(event)
        span.end()
      }),
    )
    const row = await outboxRow(event.id)
    expect(row?.traceParent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/)
    expect(row?.traceState?.length).toBeLessThanOrEqual(512)
    for (const member of row?.traceState?.split(',') ?? []) expect(member).toMatch(/^v\d+=c{40}$/)
  })
})
