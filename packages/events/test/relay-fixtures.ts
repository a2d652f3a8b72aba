// What the outbox and relay tests share: a database with the outbox, test events on unique topics, a Kafka reader that
// counts effects the way an idempotent consumer applies them, a switch that cuts one Kafka client's network, relays.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { createDatabase, type Sql, transaction } from '@meridian/db'
import {
  freshDatabase,
  freshTopics,
  infraEndpoints,
  scaledMs,
  type TestDatabase,
  type TestTopics,
  testKafka,
  uniqueName,
  waitMs,
} from '@meridian/testkit'
import type { Consumer, ISocketFactory } from 'kafkajs'
import type { DomainEvent } from '../src/envelope.ts'
import { newEventId } from '../src/event-id.ts'
import { migrateEventTables } from '../src/event-tables.ts'
import { createEventProducer, createKafka, type EventProducer, type KafkaOptions } from '../src/kafka.ts'
import { appendToOutbox, type OutboxEntry } from '../src/outbox.ts'
import type { OutboxRelayLogger } from '../src/outbox-relay.ts'

/** Polls `condition` until it holds; fails with `what` after `timeoutMs` (the tests' scaled wait by default). */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = scaledMs(waitMs),
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await delay(25)
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

export interface OutboxDatabase {
  sql: Sql
  url: string
  drop(): Promise<void>
}

/** A database of the test file's own with the outbox tables and a small business table, `widgets`. */
export async function outboxDatabase(label: string): Promise<OutboxDatabase> {
  const database: TestDatabase = await freshDatabase(label)
  const sql = createDatabase(database.url, { max: 6, applicationName: label })
  await migrateEventTables(sql)
  await sql`create table widgets (id text primary key, name text not null)`
  return {
    sql,
    url: database.url,
    async drop() {
      await sql.end({ timeout: 5 })
      await database.drop()
    },
  }
}

/**
 * freshTopics, tried again when the broker's metadata lags behind the topics just created: kafkajs's wait for their
 * leaders can fail with "This server does not host this topic-partition" while the broker is busy.
 */
export async function outboxTopics(baseNames: string[]): Promise<TestTopics> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await freshTopics(baseNames, 3)
    } catch (error) {
      const type = (error as { type?: unknown }).type
      if (attempt >= 3 || type !== 'UNKNOWN_TOPIC_OR_PARTITION') throw error
      await delay(500)
    }
  }
}

/** An envelope of a test type (a unique topic name, so not in the catalogue): built directly, not by createEvent. */
export function testEvent(type: string, data: Record<string, unknown>): DomainEvent {
  return {
    id: newEventId(),
    type,
    source: 'outbox-test',
    schemaVersion: '1.0.0',
    timestamp: new Date().toISOString(),
    data,
  }
}

/** A committed business write and its event; `write` identifies the effect a consumer would apply. */
export interface Write {
  write: string
  aggregateId: string
  seq: number
  entries: OutboxEntry[]
}

/** Inserts a widget and appends its event in one transaction, as a service's use case would. */
export async function writeWidget(sql: Sql, topic: string, aggregateId: string, seq: number): Promise<Write> {
  const write = uniqueName('w')
  const entries = await transaction(sql, async (tx) => {
    await tx`insert into widgets (id, name) values (${write}, ${`widget ${seq} of ${aggregateId}`})`
    return appendToOutbox(tx, testEvent(topic, { write, seq }), { aggregateId })
  })
  return { write, aggregateId, seq, entries }
}

export interface Delivered {
  topic: string
  partition: number
  key: string
  messageId: string | undefined
  event: DomainEvent
}

/** Reads topics from the beginning; applies each event once per envelope id, as the inbox will. */
export class EffectCounter {
  readonly messages: Delivered[] = []
  /** first delivery of each envelope id, in the order they came (per partition: Kafka's order) */
  readonly effects: Delivered[] = []
  private readonly seen = new Set<string>()

  private constructor(private readonly consumer: Consumer) {}

  static async start(topics: string[]): Promise<EffectCounter> {
    const consumer = testKafka().consumer({ groupId: uniqueName('outbox-reader'), maxWaitTimeInMs: 100 })
    const counter = new EffectCounter(consumer)
    await consumer.connect()
    await consumer.subscribe({ topics, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        const delivered: Delivered = {
          topic,
          partition,
          key: message.key?.toString() ?? '',
          messageId: message.headers?.['message-id']?.toString(),
          event: JSON.parse(message.value?.toString() ?? 'null') as DomainEvent,
        }
        counter.messages.push(delivered)
        if (!counter.seen.has(delivered.event.id)) {
          counter.seen.add(delivered.event.id)
          counter.effects.push(delivered)
        }
      },
    })
    return counter
  }

  get distinct(): number {
    return this.seen.size
  }

  has(eventId: string): boolean {
    return this.seen.has(eventId)
  }

  /**
   * Lost: a committed write with no effect. Duplicated: a write applied more than once — an event republished under a
   * new envelope id would slip past the inbox. Unexpected: an effect of no committed write (e.g. a rolled-back one).
   */
  account(writes: Write[], topic?: string): { lost: number; duplicated: number; unexpected: number } {
    const expected = new Set(writes.map((each) => each.write))
    const applied = new Map<string, number>()
    for (const effect of this.effects) {
      if (topic !== undefined && effect.topic !== topic) continue
      const write = String(effect.event.data.write)
      applied.set(write, (applied.get(write) ?? 0) + 1)
    }
    return {
      lost: [...expected].filter((write) => !applied.has(write)).length,
      duplicated: [...applied.values()].filter((count) => count > 1).length,
      unexpected: [...applied.keys()].filter((write) => !expected.has(write)).length,
    }
  }

  /** For each aggregate, the sequence numbers of its effects in the order they were applied. */
  sequencesByKey(topic: string): Map<string, number[]> {
    const sequences = new Map<string, number[]>()
    for (const effect of this.effects) {
      if (effect.topic !== topic) continue
      const list = sequences.get(effect.key) ?? []
      list.push(Number(effect.event.data.seq))
      sequences.set(effect.key, list)
    }
    return sequences
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect()
  }
}

/**
 * Cuts the network of one Kafka client, through its socket factory, without touching the shared broker other test
 * files are using: `cut()` resets every open connection and refuses new ones until `restore()`.
 */
export class NetworkSwitch {
  private readonly sockets = new Set<Socket>()
  private down = false
  private loseProduceResponse: (() => void) | undefined

  readonly socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = new Socket()
    if (this.down) {
      setImmediate(() => socket.destroy(networkError('ECONNREFUSED', `connect ECONNREFUSED ${host}:${port}`)))
      return socket
    }
    this.sockets.add(socket)
    socket.once('close', () => this.sockets.delete(socket))
    socket.setKeepAlive(true, 60_000)
    socket.connect({ host, port }, onConnect)
    const write = socket.write.bind(socket) as (chunk: Buffer) => boolean
    socket.write = ((chunk: Buffer) => {
      const written = write(chunk)
      // a Kafka request: int32 size, then int16 api key; 0 is Produce
      if (
        this.loseProduceResponse &&
        Buffer.isBuffer(chunk) &&
        chunk.length > 6 &&
        chunk.readInt16BE(4) === 0
      ) {
        const cut = this.loseProduceResponse
        this.loseProduceResponse = undefined
        socket.pause() // the broker writes the batch and answers; the answer is never read
        setTimeout(cut, 300)
      }
      return written
    }) as typeof socket.write
    return socket
  }

  /**
   * The next produce request reaches the broker, which writes the batch; then the network is cut before the answer is
   * read. The client cannot tell whether the batch was written. Resolves once the network is down.
   */
  cutAfterNextProduceRequest(): Promise<void> {
    return new Promise((resolve) => {
      this.loseProduceResponse = () => {
        this.cut()
        resolve()
      }
    })
  }

  get isDown(): boolean {
    return this.down
  }

  cut(): void {
    this.down = true
    for (const socket of this.sockets) socket.destroy(networkError('ECONNRESET', 'read ECONNRESET'))
    this.sockets.clear()
  }

  restore(): void {
    this.down = false
  }
}

function networkError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${message} (network cut by the test)`), { code })
}

/** A producer on the shared broker; through `network` when given, so a test can cut it. */
export async function testProducer(network?: NetworkSwitch): Promise<EventProducer> {
  const options: KafkaOptions = {
    brokers: infraEndpoints().kafkaBrokers,
    clientId: uniqueName('outbox-relay'),
  }
  if (network) options.socketFactory = network.socketFactory
  return createEventProducer(createKafka(options))
}

export interface LogEntry {
  level: 'info' | 'warn' | 'error'
  obj: object
  msg: string | undefined
}

/** Keeps what the relay logs, so tests can check it (and the test output stays quiet). */
export function recordingLogger(): OutboxRelayLogger & { entries: LogEntry[] } {
  const entries: LogEntry[] = []
  return {
    entries,
    info: (obj, msg) => entries.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => entries.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => entries.push({ level: 'error', obj, msg }),
  }
}

/** What a relay process prints on stdout, one JSON line each after `relayReportPrefix`. */
export type RelayReport =
  | { kind: 'started'; relay: string }
  | { kind: 'leader'; relay: string; at: number }
  | { kind: 'standby'; relay: string; at: number }
  | { kind: 'published'; relay: string; at: number; outboxIds: string[]; eventIds: string[] }
  | { kind: 'stopped'; relay: string }

const relayReportPrefix = 'relay-report '

export interface RelayProcessConfig {
  name: string
  databaseUrl: string
  brokers: string
  batchSize: number
  pollIntervalMs: number
  leadershipRetryMs: number
  /** never return from onPublished: the test kills the process between publish and delete */
  holdAfterPublish: boolean
  /** starts each report line on stdout */
  reportPrefix: string
}

/** A relay running in a child process (tsx), so that a test can SIGKILL it. */
export class RelayProcess {
  readonly reports: RelayReport[] = []
  readonly exited: Promise<void>
  private stderr = ''

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    let pending = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        if (line.startsWith(relayReportPrefix)) {
          this.reports.push(JSON.parse(line.slice(relayReportPrefix.length)) as RelayReport)
        }
      }
    })
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-20_000)
    })
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
  }

  static start(config: Omit<RelayProcessConfig, 'brokers' | 'reportPrefix'>): RelayProcess {
    const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url))
    if (!existsSync(tsx))
      throw new Error(`relay processes run through tsx, and ${tsx} is missing: run pnpm install`)
    const script = fileURLToPath(new URL('./relay-process.ts', import.meta.url))
    const full: RelayProcessConfig = {
      ...config,
      brokers: infraEndpoints().kafkaBrokers,
      reportPrefix: relayReportPrefix,
    }
    // Its own process group: tsx runs the script in a child process, and a SIGKILL must reach both.
    const child = spawn(tsx, [script, JSON.stringify(full)], {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    return new RelayProcess(config.name, child)
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  has(kind: RelayReport['kind']): boolean {
    return this.reports.some((report) => report.kind === kind)
  }

  published(): Extract<RelayReport, { kind: 'published' }>[] {
    return this.reports.filter((report) => report.kind === 'published')
  }

  async waitFor(what: string, condition: () => boolean, timeoutMs = scaledMs(waitMs)): Promise<void> {
    try {
      await waitFor(`${this.name}: ${what}`, () => condition() || !this.isRunning, timeoutMs)
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${this.name} stderr:\n${this.stderr}`)
    }
    if (!condition())
      throw new Error(`${this.name} exited while waiting for ${what}\nstderr:\n${this.stderr}`)
  }

  /** SIGKILL to the relay's process group: no shutdown code runs, its connections just drop. */
  async kill(): Promise<void> {
    if (this.isRunning && this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL')
    await this.exited
  }

  /** Asks the relay to stop gracefully (it gives up the lock) and waits for the process to end. */
  async stop(): Promise<void> {
    if (this.isRunning) this.child.stdin?.end('stop\n')
    await this.exited
  }
}
