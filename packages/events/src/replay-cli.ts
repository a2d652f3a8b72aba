// scripts/events: replay <topic>.dlt — re-publishes dead-lettered events to their original topic (KAFKA_BROKERS, with
// the client's TLS and SASL from KAFKA_TLS* and KAFKA_SASL_* as the services read them).
import { kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { pino } from 'pino'
import { createKafka } from './kafka.ts'
import { type ReplayResult, replayDeadLetters } from './replay.ts'

const usage = `usage: scripts/events <command>
  replay <topic>.dlt [--all]
                           re-publish the dead-lettered events of <topic>.dlt not replayed yet (--all: every one it
                           holds) to their original topic; consumers skip any event their group already processed in
                           the last 24 hours`

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command !== 'replay') {
    process.stderr.write(`${usage}\n`)
    return command === undefined || command === 'help' || command === '--help' ? 0 : 2
  }
  const all = rest.includes('--all')
  const names = rest.filter((arg) => arg !== '--all')
  const topic = names[0]
  if (!topic || names.length > 1 || !topic.endsWith('.dlt')) {
    process.stderr.write(
      `scripts/events replay: name one dead-letter topic, e.g. order.placed.dlt\n${usage}\n`,
    )
    return 2
  }
  const brokers = process.env.KAFKA_BROKERS
  if (!brokers) {
    process.stderr.write(
      'scripts/events: KAFKA_BROKERS is not set (scripts/events sets it from scripts/infra)\n',
    )
    return 1
  }
  const security = kafkaSecurityFromEnv(process.env)
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' }, pino.destination(2))
  const kafka = createKafka({ brokers, clientId: 'meridian-events-replay', ...security })
  const result = await replayDeadLetters({ kafka, topic, logger, from: all ? 'beginning' : 'pending' })
  process.stdout.write(`${replaySummary(topic, result)}\n`)
  return 0
}

/** What the replay did, in one line: what was replayed, or why nothing was. */
function replaySummary(topic: string, { replayed, held }: ReplayResult): string {
  if (replayed > 0) {
    return `replayed ${replayed} event${replayed === 1 ? '' : 's'} from ${topic} to ${topic.replace(/\.dlt$/, '')}`
  }
  if (held === 0) return `${topic}: nothing to replay (it holds no events: none was dead-lettered)`
  return `${topic}: nothing to replay (every event was replayed before; --all replays them again)`
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`[events] ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
