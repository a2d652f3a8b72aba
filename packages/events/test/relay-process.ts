// A relay in a process of its own, started by the relay fault tests (through tsx) so that they can SIGKILL it.
// Argument: a RelayProcessConfig as JSON. Reports on stdout; stops on "stop" on stdin, exits when stdin closes.
import { createDatabase } from '@meridian/db'
import { createEventProducer, createKafka } from '../src/kafka.ts'
import { createOutboxRelay, type OutboxRelayLogger } from '../src/outbox-relay.ts'
// types only: the fixtures module imports the test runner, which this process does not run in
import type { RelayProcessConfig, RelayReport } from './relay-fixtures.ts'

const config = JSON.parse(process.argv[2] ?? '{}') as RelayProcessConfig

function report(message: RelayReport): void {
  process.stdout.write(`${config.reportPrefix}${JSON.stringify(message)}\n`)
}

function log(level: string) {
  return (obj: object, msg?: string) => {
    const err = (obj as { err?: unknown }).err
    process.stderr.write(`${config.name} ${level}: ${msg ?? ''} ${err instanceof Error ? err.message : ''}\n`)
  }
}
const logger: OutboxRelayLogger = { info: log('info'), warn: log('warn'), error: log('error') }

const sql = createDatabase(config.databaseUrl, { max: 2, applicationName: config.name })
const producer = await createEventProducer(createKafka({ brokers: config.brokers, clientId: config.name }))
const relay = createOutboxRelay({
  sql,
  producer,
  logger,
  batchSize: config.batchSize,
  pollIntervalMs: config.pollIntervalMs,
  leadershipRetryMs: config.leadershipRetryMs,
  onPublished: async (rows) => {
    report({
      kind: 'published',
      relay: config.name,
      at: Date.now(),
      outboxIds: rows.map((row) => row.outboxId),
      eventIds: rows.map((row) => row.eventId),
    })
    // the test kills this process now: after Kafka has the batch, before its rows are deleted
    if (config.holdAfterPublish) await new Promise<never>(() => {})
  },
})

let leader = false
const watch = setInterval(() => {
  if (relay.isLeader() === leader) return
  leader = !leader
  report({ kind: leader ? 'leader' : 'standby', relay: config.name, at: Date.now() })
}, 10)

await relay.start()
report({ kind: 'started', relay: config.name })

let stopping = false
async function stop(): Promise<void> {
  stopping = true
  clearInterval(watch)
  await relay.stop()
  await producer.disconnect()
  await sql.end({ timeout: 5 })
  report({ kind: 'stopped', relay: config.name })
  process.exit(0)
}

process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk: string) => {
  if (chunk.includes('stop')) void stop()
})
// the test process is gone: do not outlive it
process.stdin.on('end', () => {
  if (!stopping) process.exit(1)
})
