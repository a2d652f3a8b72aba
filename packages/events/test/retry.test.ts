// Retries and dead letters with the spec's delays (1 s, 5 s, 15 s) on real Kafka: the slowest test of the package.
import { scaledMs, uniqueName } from '@meridian/testkit'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { type ConsumeContext, consume } from '../src/consumer.ts'
import type { DeadLetterInfo } from '../src/dead-letter.ts'
import type { DomainEvent } from '../src/envelope.ts'
import { createEventMetrics } from '../src/event-metrics.ts'
import {
  applyEffect,
  eventKafka,
  keyOf,
  orderCompleted,
  publishEvents,
  readTopics,
  recordingLogger,
  waitFor,
} from './consumer-fixtures.ts'
import { consumerFixture, undoAfterFile } from './file-fixtures.ts'

const kafka = eventKafka('retry-test')
const afterFile = undoAfterFile()

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('retries and dead letters', () => {
  it(
    'when a handler always fails, then the event visits retry.1, retry.2 and retry.3 at least 1 s, 5 s and 15 s after each failure, lands in the dead-letter topic with its headers and raises the alert, while other keys keep flowing',
    async () => {
      const { topics, db, producer } = await consumerFixture(kafka, afterFile)
      const group = uniqueName('g')
      const { logger, entries } = recordingLogger()
      const metrics = createEventMetrics(new Registry())
      const alerts: { info: DeadLetterInfo; at: number }[] = []

      const doomed = orderCompleted('order-doomed')
      const flaky = orderCompleted('order-flaky')
      const attempts: { at: number; context: ConsumeContext }[] = []
      const flakyAttempts: ConsumeContext[] = []
      const appliedAt = new Map<string, number>()
      const consumer = await consume({
        kafka,
        sql: db.sql,
        type: 'order.completed',
        topic: topics.topic,
        group,
        logger,
        metrics,
        onDeadLetter: (info) => {
          alerts.push({ info, at: Date.now() })
        },
        handler: async (event, tx, context) => {
          if (event.id === doomed.id) {
            attempts.push({ at: Date.now(), context })
            throw new Error('the payment provider is on fire')
          }
          if (event.id === flaky.id) {
            flakyAttempts.push(context)
            if (flakyAttempts.length === 1) throw new Error('flaky the first time')
          }
          await applyEffect(tx, event)
          appliedAt.set(event.id, Date.now())
        },
      })
      afterFile(() => consumer.stop())

      await publishEvents(producer, topics.topic, [doomed])
      // While the doomed event waits between its retries, events of other keys keep coming, one of which fails once
      // (its retry passes through retry.1 while the doomed event is held in retry.2).
      const others: DomainEvent[] = []
      for (let i = 0; i < 12; i++) {
        await sleep(1000)
        const event = i === 2 ? flaky : orderCompleted(`order-${i}`)
        others.push(event)
        await publishEvents(producer, topics.topic, [event])
      }

      const [alert] = await waitFor('the dead letter', () => alerts.length > 0 && alerts, scaledMs(40_000))
      // no second alert for it: a pause (scaled), since nothing can be waited for that does not come
      await sleep(scaledMs(500))
      expect(alerts).toHaveLength(1)

      // four runs: the first delivery and three retries, each no earlier than its delay after the previous failure
      expect(attempts.map((a) => [a.context.topic, a.context.attempt])).toEqual([
        [topics.topic, 1],
        [topics.retry(1), 2],
        [topics.retry(2), 3],
        [topics.retry(3), 4],
      ])
      const delays = [1000, 5000, 15000]
      const retries = await readTopics(kafka, [topics.retry(1), topics.retry(2), topics.retry(3)])
      for (const [n, delay] of delays.entries()) {
        const failedRun = attempts[n]!
        const nextRun = attempts[n + 1]!
        const retry = retries.find(
          (m) => m.topic === topics.retry(n + 1) && m.headers['message-id'] === doomed.id,
        )
        expect(retry).toMatchObject({
          key: keyOf(doomed),
          value: JSON.stringify(doomed),
          headers: {
            'retry-count': String(n + 1),
            'original-topic': topics.topic,
            'consumer-group': group,
            'error-message': 'the payment provider is on fire',
          },
        })
        const dueAt = Number(retry?.headers['retry-due-at'])
        expect(dueAt - failedRun.at).toBeGreaterThanOrEqual(delay)
        expect(nextRun.at).toBeGreaterThanOrEqual(dueAt)
        expect(nextRun.at - failedRun.at).toBeGreaterThanOrEqual(delay)
      }

      // then the dead-letter topic, with the original key and value and the failure headers
      const [dead, ...moreDead] = await readTopics(kafka, [topics.dlt])
      expect(moreDead).toHaveLength(0)
      expect(dead).toMatchObject({
        key: keyOf(doomed),
        value: JSON.stringify(doomed),
        headers: {
          'message-id': doomed.id,
          'original-topic': topics.topic,
          'error-message': 'the payment provider is on fire',
          'consumer-group': group,
          'retry-count': '3',
        },
      })
      expect(dead?.headers['retry-due-at']).toBeUndefined()
      const deadLetteredAt = dead?.headers['dead-lettered-at'] ?? ''
      expect(new Date(deadLetteredAt).toISOString()).toBe(deadLetteredAt)
      expect(Date.parse(deadLetteredAt)).toBeGreaterThanOrEqual(attempts[3]!.at)

      // the alert: hook, error log and metric
      expect(alert?.info).toEqual({
        topic: topics.topic,
        deadLetterTopic: topics.dlt,
        group,
        reason: 'retries-exhausted',
        errorMessage: 'the payment provider is on fire',
        retries: 3,
        eventId: doomed.id,
        eventType: 'order.completed',
        key: keyOf(doomed),
        deadLetteredAt,
      })
      expect(entries.filter((e) => e.level === 'error')).toMatchObject([
        { msg: 'event dead-lettered', fields: { eventId: doomed.id, alert: 'event-dead-lettered' } },
      ])
      expect((await metrics.deadLettered.get()).values.map((v) => v.value)).toEqual([1])
      const retried = Object.fromEntries(
        (await metrics.retried.get()).values.map((v) => [String(v.labels.attempt), v.value]),
      )
      expect(retried).toEqual({ '1': 2, '2': 1, '3': 1 })

      // meanwhile everything else flowed: each other event applied once, all before the doomed one was parked
      expect(flakyAttempts.map((c) => c.topic)).toEqual([topics.topic, topics.retry(1)])
      const counts = await db.effectCounts()
      expect(counts.get(doomed.id)).toBeUndefined()
      for (const event of others) {
        expect(counts.get(event.id)).toBe(1)
        expect(appliedAt.get(event.id)).toBeLessThan(alert!.at)
      }
      expect((await metrics.consumed.get()).values.map((v) => v.value)).toEqual([others.length])
    },
    scaledMs(60_000),
  )
})
