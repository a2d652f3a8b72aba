// The phase's consumer in a process of its own: consume(), the handler records when each event arrived.
import { createDatabase } from '@meridian/db'
import { consume, createKafka, type DomainEvent } from '@meridian/events'
import { monotonicMs } from './clock.ts'
import type { ConsumerRecords } from './ipc.ts'
import { serveRole, stderrLogger } from './serve-role.ts'

serveRole(async (config, progress) => {
  const sql = createDatabase(config.databaseUrl, {
    max: config.concurrency + 1,
    applicationName: 'bench-events-consumer',
  })
  const kafka = createKafka({ brokers: config.brokers, clientId: `bench-events-consumer-${process.pid}` })
  const empty = (): ConsumerRecords => ({ seqs: [], appendedAt: [], receivedAt: [], eventIds: [] })
  let records = empty()
  let handled = 0
  const consumer = await consume({
    kafka,
    sql,
    // The phase's events are not of the catalogue (their type is the phase's topic name, their data { seq,
    // appendedAt }): `type` is nominal, the topic is the phase's own, and the handler takes any envelope.
    type: 'order.placed',
    topic: config.topic,
    group: config.group,
    logger: stderrLogger('consumer'),
    validate: false,
    concurrency: config.concurrency,
    handler: async (event: DomainEvent) => {
      const receivedAt = monotonicMs()
      records.seqs.push(Number(event.data.seq))
      records.appendedAt.push(Number(event.data.appendedAt))
      records.receivedAt.push(receivedAt)
      records.eventIds.push(event.id)
      handled += 1
    },
  })
  let reported = -1
  const reporter = setInterval(() => {
    if (handled === reported) return
    reported = handled
    progress(handled)
  }, 50)
  return {
    collect(): ConsumerRecords {
      const collected = records
      records = empty()
      return collected
    },
    async close() {
      clearInterval(reporter)
      await consumer.stop()
      await sql.end({ timeout: 5 })
    },
  }
})
