// Replay of dead-lettered events, through replayDeadLetters and through `scripts/events replay`, on real Kafka.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { uniqueName } from '@meridian/testkit'
import { describe, expect, it } from 'vitest'
import { consume } from '../src/consumer.ts'
import { replayDeadLetters } from '../src/replay.ts'
import {
  applyEffect,
  eventKafka,
  eventTopics,
  kafkaBrokers,
  keyOf,
  orderCompleted,
  publishEvents,
  readTopics,
  recordingLogger,
  waitFor,
} from './consumer-fixtures.ts'
import { consumerFixture, undoAfterFile } from './file-fixtures.ts'

const kafka = eventKafka('replay-test')
const afterFile = undoAfterFile()

const eventsScript = fileURLToPath(new URL('../../../scripts/events', import.meta.url))

describe.concurrent('replay', () => {
  it('when a dead-lettered event is replayed after its cause was fixed, then it goes back to its topic and is processed once, even when replayed again', async () => {
    const { topics, db, producer } = await consumerFixture(kafka, afterFile)
    const { logger, entries } = recordingLogger()
    const event = orderCompleted()
    let fixed = false
    let deadLetters = 0
    const consumer = await consume({
      kafka,
      sql: db.sql,
      type: 'order.completed',
      topic: topics.topic,
      group: uniqueName('g'),
      logger,
      retryDelaysMs: [100],
      onDeadLetter: () => {
        deadLetters++
      },
      handler: async (e, tx) => {
        if (!fixed) throw new Error('the stock service is down')
        await applyEffect(tx, e)
      },
    })
    afterFile(() => consumer.stop())

    await publishEvents(producer, topics.topic, [event])
    await waitFor('the dead letter', () => deadLetters === 1)
    expect((await db.effectCounts()).size).toBe(0)

    fixed = true
    const replayLog = recordingLogger()
    expect(await replayDeadLetters({ kafka, topic: topics.dlt, logger: replayLog.logger })).toEqual({
      replayed: 1,
      held: 1,
      to: { [topics.topic]: 1 },
    })
    await waitFor('the replayed event', async () => (await db.effectCounts()).get(event.id) === 1)

    const [original, replayed] = (await readTopics(kafka, [topics.topic])).sort(
      (a, b) => Number(a.offset) - Number(b.offset),
    )
    expect(replayed).toEqual({
      ...original,
      offset: replayed?.offset,
      // the failure headers are not carried back
      headers: { 'message-id': event.id },
    })
    expect(replayed?.key).toBe(keyOf(event))
    expect(replayLog.entries).toMatchObject([
      { level: 'info', fields: { topic: topics.dlt, replayed: 1, to: { [topics.topic]: 1 } } },
    ])

    // replayed once, it is not pending any more: the script has nothing to replay
    const script = (...args: string[]) =>
      promisify(execFile)(eventsScript, ['replay', ...args], {
        env: { ...process.env, KAFKA_BROKERS: kafkaBrokers() },
      })
    expect((await script(topics.dlt)).stdout).toBe(
      `${topics.dlt}: nothing to replay (every event was replayed before; --all replays them again)\n`,
    )
    // a second replay of everything, through the script: the inbox recognises the event and nothing is applied again
    const { stdout } = await script(topics.dlt, '--all')
    expect(stdout).toBe(`replayed 1 event from ${topics.dlt} to ${topics.topic}\n`)
    await waitFor('the second copy to be skipped', () =>
      entries.some((e) => e.msg?.includes('already processed') && e.fields.eventId === event.id),
    )
    expect(Object.fromEntries(await db.effectCounts())).toEqual({ [event.id]: 1 })
    expect(deadLetters).toBe(1)
  })

  it('when the dead-letter topic is empty, then nothing is replayed, and the script says it holds no events (not that they were replayed before)', async () => {
    const topics = await eventTopics()
    afterFile(() => topics.delete())
    const replayLog = recordingLogger()
    expect(await replayDeadLetters({ kafka, topic: topics.dlt, logger: replayLog.logger })).toEqual({
      replayed: 0,
      held: 0,
      to: {},
    })
    expect(replayLog.entries).toMatchObject([
      { level: 'info', msg: 'nothing to replay: the dead-letter topic holds no events' },
    ])
    const script = (...args: string[]) =>
      promisify(execFile)(eventsScript, ['replay', ...args], {
        env: { ...process.env, KAFKA_BROKERS: kafkaBrokers() },
      })
    for (const args of [[topics.dlt], [topics.dlt, '--all']]) {
      expect((await script(...args)).stdout).toBe(
        `${topics.dlt}: nothing to replay (it holds no events: none was dead-lettered)\n`,
      )
    }
    expect(await readTopics(kafka, [topics.topic])).toHaveLength(0)
  })

  it('when the topic is not a dead-letter topic, then the replay refuses it', async () => {
    await expect(
      replayDeadLetters({ kafka, topic: 'order.placed', logger: recordingLogger().logger }),
    ).rejects.toThrow(/not a dead-letter topic/)
  })
})
