// The phase's outbox relay in a process of its own (wake-up on or off); records when Kafka acked each row.
import { createDatabase } from '@meridian/db'
import { createEventProducer, createKafka, createOutboxRelay } from '@meridian/events'
import { monotonicMs } from './clock.ts'
import type { RelayRecords } from './ipc.ts'
import { serveRole, stderrLogger } from './serve-role.ts'

serveRole(async (config) => {
  const sql = createDatabase(config.databaseUrl, { max: 2, applicationName: 'bench-events-relay' })
  const producer = await createEventProducer(
    createKafka({ brokers: config.brokers, clientId: `bench-events-relay-${process.pid}` }),
  )
  let records: RelayRecords = { eventIds: [], publishedAt: [] }
  const relay = createOutboxRelay({
    sql,
    producer,
    logger: stderrLogger('relay'),
    listen: config.listen,
    pollIntervalMs: config.pollIntervalMs,
    onPublished: (rows) => {
      const at = monotonicMs()
      for (const row of rows) {
        records.eventIds.push(row.eventId)
        records.publishedAt.push(at)
      }
    },
  })
  await relay.start()
  const deadline = Date.now() + 15_000
  while (!relay.isLeader()) {
    if (Date.now() > deadline) throw new Error('the relay did not become the active relay within 15 s')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return {
    collect(): RelayRecords {
      const collected = records
      records = { eventIds: [], publishedAt: [] }
      return collected
    },
    async close() {
      await relay.stop()
      await producer.disconnect()
      await sql.end({ timeout: 5 })
    },
  }
})
