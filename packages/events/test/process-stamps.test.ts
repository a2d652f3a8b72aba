// Correlation by process through the outbox and Kafka, on real PostgreSQL and Kafka: a command appended with its
// process stamp goes out with the `process` header; the events its handler appends in its transaction carry the stamp
// back (`process-answer`) without the handler naming it, through a retry too; the consumer of an answer is told the
// stamp, and what that consumer writes carries none (an answer's stamp is never passed on). A malformed header is
// ignored, as a malformed traceparent is.
import { transaction } from '@meridian/db'
import { uniqueName } from '@meridian/testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { ConsumeContext } from '../src/consumer.ts'
import type { DomainEvent } from '../src/envelope.ts'
import { appendToOutbox } from '../src/outbox.ts'
import {
  answeredStamp,
  inAnswerTo,
  ProcessHeader,
  type ProcessStamp,
  stampIn,
  stampText,
} from '../src/process-stamp.ts'
import { applyEffect, eventKafka, readTopics, waitFor } from './consumer-fixtures.ts'
import { testEvent } from './relay-fixtures.ts'
import { type RelayedTopic, relayedTopic } from './relayed-topic.ts'

const stamp: ProcessStamp = { type: 'renewal', key: 'sub-42', step: 'charge', attempt: 2 }

describe('the stamp as a header', () => {
  it('when a header holds a stamp, then it is read back as written', () => {
    expect(
      stampIn({ [ProcessHeader.command]: Buffer.from(stampText(stamp)) }, ProcessHeader.command),
    ).toEqual(stamp)
  })

  it('when a header is absent, too long, not JSON, or not a stamp, then it is ignored', () => {
    const read = (value: string) => stampIn({ process: value }, ProcessHeader.command)
    expect(stampIn({}, ProcessHeader.command)).toBeUndefined()
    expect(read(JSON.stringify({ ...stamp, key: 'k'.repeat(600) }))).toBeUndefined()
    expect(read('{"type":')).toBeUndefined()
    expect(read(JSON.stringify({ ...stamp, attempt: 0 }))).toBeUndefined()
    expect(read(JSON.stringify({ ...stamp, type: 'Not A Type' }))).toBeUndefined()
    expect(read(JSON.stringify({ ...stamp, extra: true }))).toBeUndefined()
    expect(read(JSON.stringify([stamp]))).toBeUndefined()
  })

  it('when a process writes a stamp that is none, then it is refused before anything is written', () => {
    expect(() => stampText({ ...stamp, step: '' })).toThrow(RangeError)
  })

  it('when code runs in answer to a command, then it sees the stamp; outside, and in answer to none, it sees nothing', async () => {
    expect(answeredStamp()).toBeUndefined()
    await inAnswerTo(stamp, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      expect(answeredStamp()).toEqual(stamp)
      await inAnswerTo(undefined, async () => expect(answeredStamp()).toBeUndefined())
    })
    expect(answeredStamp()).toBeUndefined()
  })
})

let relayed: RelayedTopic

beforeAll(async () => {
  relayed = await relayedTopic('stamp')
})

afterEach(() => relayed.stopConsumers())

afterAll(() => relayed?.close())

/** The outbox rows of one chain (by the key their data carries), with their stamps. */
const rowsOf = (key: string) =>
  relayed.database.sql<{ hop: number; command: string | null; answer: string | null }[]>`
    select (payload->'data'->>'hop')::int as hop, process_command as command, process_answer as answer
    from outbox where payload->'data'->>'key' = ${key} order by id`

describe('a command and its answers through the outbox and Kafka', () => {
  it('when a command is handled (after a failed try) and its answer is consumed, then the answer carries the command’s stamp and what the answer leads to carries none', async () => {
    const key = uniqueName('chain')
    const { database, topics } = relayed
    const event = (hop: number): DomainEvent => testEvent(topics.topic, { key, hop })
    const seen = new Map<number, Pick<ConsumeContext, 'command' | 'answerTo' | 'attempt'>>()
    let failedOnce = false
    await relayed.startConsumer('stamp-group', async (delivered, tx, consumed) => {
      const hop = Number((delivered.data as unknown as { hop: number }).hop)
      if (hop === 1 && !failedOnce) {
        failedOnce = true
        throw new Error('the first try fails: the retry must answer with the stamp too')
      }
      await applyEffect(tx, delivered)
      const { command, answerTo, attempt } = consumed
      seen.set(hop, { ...(command ? { command } : {}), ...(answerTo ? { answerTo } : {}), attempt })
      // hop 1 is the command, hop 2 its answer, hop 3 what the answer's consumer writes: no handler names a stamp
      if (hop < 3) await appendToOutbox(tx, event(hop + 1), { aggregateId: key })
    })
    await transaction(database.sql, (tx) =>
      appendToOutbox(tx, event(1), { aggregateId: key, command: stamp }),
    )

    await waitFor('the chain to its third hop', () => seen.has(3))
    expect(seen.get(1)).toEqual({ command: stamp, attempt: 2 })
    expect(seen.get(2)).toEqual({ answerTo: stamp, attempt: 1 })
    expect(seen.get(3)).toEqual({ attempt: 1 })
    expect(await rowsOf(key)).toEqual([
      { hop: 1, command: stampText(stamp), answer: null },
      { hop: 2, command: null, answer: stampText(stamp) },
      { hop: 3, command: null, answer: null },
    ])
    const messages = (await readTopics(eventKafka(), [topics.topic, topics.retry(1)])).filter(
      (message) => message.key === key,
    )
    const headersOf = (hop: number, topic = topics.topic) =>
      messages.find(
        (message) => message.topic === topic && JSON.parse(message.value ?? '{}').data.hop === hop,
      )?.headers
    expect(headersOf(1)?.[ProcessHeader.command]).toBe(stampText(stamp))
    // the retry keeps the command's stamp, so its answer carries it too
    expect(headersOf(1, topics.retry(1))?.[ProcessHeader.command]).toBe(stampText(stamp))
    expect(headersOf(2)?.[ProcessHeader.answer]).toBe(stampText(stamp))
    expect(headersOf(2)?.[ProcessHeader.command]).toBeUndefined()
    expect(headersOf(3)).not.toHaveProperty(ProcessHeader.answer)
    expect(headersOf(3)).not.toHaveProperty(ProcessHeader.command)
  })
})
