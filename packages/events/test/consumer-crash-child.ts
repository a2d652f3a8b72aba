// A consumer process for the crash test: it halts between one event's commit and its offset commit, to be killed.
import postgres from 'postgres'
import { consume } from '../src/consumer.ts'
import { createKafka } from '../src/kafka.ts'

const { DATABASE_URL, KAFKA_BROKERS, TOPIC, GROUP, CRASH_AT_EVENT_ID } = process.env
if (!DATABASE_URL || !KAFKA_BROKERS || !TOPIC || !GROUP || !CRASH_AT_EVENT_ID) {
  throw new Error('DATABASE_URL, KAFKA_BROKERS, TOPIC, GROUP and CRASH_AT_EVENT_ID are required')
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} }
await consume({
  kafka: createKafka({ brokers: KAFKA_BROKERS, clientId: 'crash-child' }),
  sql: postgres(DATABASE_URL, { max: 2, onnotice: () => {} }),
  // the events are order.completed ones, on the test's own topic
  type: 'order.completed',
  topic: TOPIC,
  group: GROUP,
  logger: quiet,
  retryDelaysMs: [],
  // the minimum the broker accepts, so that the group notices the dead member soon
  sessionTimeoutMs: 6000,
  // the same effect as applyEffect in consumer-fixtures.ts (not imported: that module needs the vitest runner)
  handler: async (event, tx) => {
    await tx`insert into effects (event_id, key) values (${event.id}, ${event.data.orderId})`
  },
  afterCommit: async (event, context) => {
    if (event.id !== CRASH_AT_EVENT_ID) return
    process.stdout.write(`crash-point ${context.partition} ${context.offset}\n`)
    await new Promise(() => {})
  },
})
process.stdout.write('joined\n')
