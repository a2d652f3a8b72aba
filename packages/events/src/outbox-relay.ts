// OutboxRelay: publishes committed outbox rows to Kafka in id order, with one active relay per database.
// It composes the relay's leadership (outbox-leadership.ts) and its publishing (outbox-publishing.ts) in one loop.
import type { Sql } from '@meridian/db'
import type { EventMetrics } from './event-metrics.ts'
import type { EventProducer } from './kafka.ts'
import { OUTBOX_CHANNEL } from './outbox.ts'
import { LeadershipLost, oneConnectionClient, RelayLeadership } from './outbox-leadership.ts'
import { OutboxPublisher, type PublishedOutboxRow, PublishFailed } from './outbox-publishing.ts'
import type { OutboxRelayLogger } from './outbox-relay-logger.ts'

export { OUTBOX_RELAY_LOCK_NAME } from './outbox-leadership.ts'
export type { OutboxRelayLogger, PublishedOutboxRow }

export interface OutboxRelayOptions {
  /** the service's database (the outbox table: migrateEventTables) */
  sql: Sql
  producer: EventProducer
  logger: OutboxRelayLogger
  metrics?: EventMetrics
  /**
   * Prepended to each row's event type to name its topic (`KAFKA_NAMESPACE`): a whole system run in a namespace of
   * its own (end-to-end tests, fault runs, benchmarks) shares a broker without reading anyone else's events; default ''
   */
  topicPrefix?: string
  /** rows read and published at once; default 100 */
  batchSize?: number
  /**
   * how often the active relay looks for rows when nothing wakes it; default 1000 ms while it listens for commits
   * (a notification lost while its LISTEN connection reconnects waits at most this long), 100 ms when it does not
   */
  pollIntervalMs?: number
  /** wake at once on LISTEN `meridian_outbox` (signalled by appendToOutbox on commit); default true */
  listen?: boolean
  /**
   * When commits were notified while the relay was publishing, how long it waits before reading them, so that the
   * commits of the next few milliseconds join the same batch (one select, one Kafka request, one delete) instead of
   * each starting a batch of its own; default 5 ms, 0 reads at once. An idle relay reads at once when notified (the
   * latency of a lone event is not traded away), and a full batch is followed by the next one without waiting.
   */
  wakeLingerMs?: number
  /** delete published rows (default), or mark them published and remove them after `retentionMs` */
  mode?: 'delete' | 'mark'
  /** how long marked rows are kept; default 7 days */
  retentionMs?: number
  /** how often a standby relay tries to become the active one; default 1000 ms */
  leadershipRetryMs?: number
  /** the longest wait between attempts while publishing fails (doubling from 100 ms); default 5000 ms */
  maxBackoffMs?: number
  /**
   * Called once Kafka has acknowledged a batch and before its rows are deleted or marked. A crash in between
   * publishes the batch again (at-least-once; consumers deduplicate by event id). A rejection counts as a failed
   * publish: the batch is sent again. For tracing and latency measurement; fault tests crash a relay process here.
   */
  onPublished?: (rows: PublishedOutboxRow[]) => void | Promise<void>
}

export interface OutboxRelay {
  /**
   * Starts relaying in the background; resolves after the first attempt to become the active relay (which may
   * fail while the database is down: the relay keeps trying).
   */
  start(): Promise<void>
  /** Finishes the batch in hand, gives up the lock, closes the relay's connections. The producer stays open. */
  stop(): Promise<void>
  /** true while this instance is the active relay of its database */
  isLeader(): boolean
}

/**
 * Ordering. Rows are published in id order, so the events of one aggregate reach their partition in the order they
 * were appended — as long as a single relay publishes at a time. Several instances of a service each run a relay;
 * `for update skip locked` alone would let a second relay skip the rows the first has locked and publish newer rows
 * of the same aggregate before them. So only ONE RELAY PER DATABASE IS ACTIVE: it holds a PostgreSQL session
 * advisory lock for as long as its session lives. The others are standbys that try `pg_try_advisory_lock` every
 * `leadershipRetryMs` and take over when the active relay stops or its process or connection dies (the server then
 * ends the session and releases the lock). We chose this over partitioning rows by key hash among relays: it needs no
 * membership protocol or rebalancing when instances come and go, and one relay publishing in batches keeps up with
 * one service's database. A pass is two statements and no transaction (outbox-publishing.ts): the batch's select,
 * which also checks that its session is still the one holding the lock, and the delete once Kafka has acknowledged.
 *
 * The session. The lock and every relay statement use a connection of their own: a one-connection client made from
 * the pool's options, as postgres.js makes its LISTEN connection. Not `sql.reserve()` nor `sql.begin()`: with
 * postgres.js 3.4, a statement sent on a reserved connection, or the commit/rollback that ends a `begin()` callback,
 * after that connection died (server restart, terminated backend, network) throws a TypeError outside any promise
 * and crashes the process — and the relay awaits Kafka in the middle of its transaction. A statement sent while a
 * connection is dying can also stay unanswered for ever. So a statement of the relay fails as soon as its connection
 * closes, none is sent once it has, and after any failed statement the relay sends nothing more on that client: it
 * ends it (which ends the session and its lock) and starts again as a standby on a new one.
 *
 * Delivery. Publish, then delete (or mark): a crash in between publishes the batch again — at-least-once, consumers
 * deduplicate by the envelope id. When publishing fails (Kafka unreachable) the rows stay, the relay logs a warning,
 * backs off from 100 ms doubling to `maxBackoffMs`, and retries — first the very same batch: the idempotent producer
 * numbers each partition's messages, and if the broker had written the failed request, only an identical request is
 * recognised as a duplicate (a larger one would be refused as out of sequence, for good).
 */
export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { sql, logger } = options
  const settings = relaySettings(options)
  const wakeup = new RelayWakeup(settings.wakeLingerMs)
  /** the LISTEN of the active relay: a client of its own, made anew at every leadership */
  let listener: Sql | undefined
  const stopListening = async () => {
    const previous = listener
    listener = undefined
    await previous?.end({ timeout: 1 }).catch(() => {})
  }
  let running: Promise<void> | undefined

  const leadership: RelayLeadership = new RelayLeadership(sql, logger, async () => {
    publisher.restartSchedules()
    if (!settings.listen) return
    // A new client at every leadership, which is lost whenever the database went: when its connection closes,
    // postgres.js listens again once, and if that attempt fails (the server restarting, a failover under way) the
    // channel stays broken in that client without a word — the relay would wait at its slow poll for wake-ups that
    // never come, and listening again on the same client meets the broken channel.
    await stopListening()
    const client = oneConnectionClient(sql)
    try {
      await client.listen(OUTBOX_CHANNEL, () => wakeup.wake())
      listener = client
    } catch (error) {
      await client.end({ timeout: 1 }).catch(() => {})
      logger.warn({ err: error }, 'cannot listen for outbox commits; relying on polling')
    }
  })
  const publisher = new OutboxPublisher({
    leader: leadership,
    producer: options.producer,
    logger,
    metrics: options.metrics,
    onPublished: options.onPublished,
    topicPrefix: options.topicPrefix ?? '',
    batchSize: settings.batchSize,
    mode: options.mode ?? 'delete',
    retentionMs: settings.retentionMs,
  })
  const relay: RelayParts = {
    leadership,
    publisher,
    wakeup,
    logger,
    settings,
    listening: () => listener !== undefined,
  }

  return {
    start() {
      if (running) throw new Error('this outbox relay was already started')
      return new Promise<void>((firstAttemptDone) => {
        running = runRelay(relay, firstAttemptDone).catch((error: unknown) => {
          // runRelay() handles its errors itself; reaching this is a bug, and relaying has stopped
          logger.error({ err: error }, 'the outbox relay stopped unexpectedly')
          firstAttemptDone()
        })
      })
    },

    async stop() {
      wakeup.stop()
      await running
      await stopListening()
      await leadership.resign()
    },

    isLeader() {
      return leadership.isLeader()
    },
  }
}

interface RelaySettings {
  batchSize: number
  /** the poll while commits wake the relay */
  pollIntervalMs: number
  /** the poll while nothing does (listening off, or LISTEN failed) */
  unwakedPollIntervalMs: number
  leadershipRetryMs: number
  maxBackoffMs: number
  retentionMs: number
  listen: boolean
  wakeLingerMs: number
}

/** The options' numbers, checked, with their defaults. */
function relaySettings(options: OutboxRelayOptions): RelaySettings {
  const wakeLingerMs = options.wakeLingerMs ?? 5
  const settings: RelaySettings = {
    batchSize: positiveInteger('batchSize', options.batchSize ?? 100),
    pollIntervalMs: positiveInteger('pollIntervalMs', options.pollIntervalMs ?? 1000),
    unwakedPollIntervalMs: positiveInteger('pollIntervalMs', options.pollIntervalMs ?? 100),
    leadershipRetryMs: positiveInteger('leadershipRetryMs', options.leadershipRetryMs ?? 1000),
    maxBackoffMs: positiveInteger('maxBackoffMs', options.maxBackoffMs ?? 5000),
    retentionMs: positiveInteger('retentionMs', options.retentionMs ?? 7 * 24 * 60 * 60 * 1000),
    listen: options.listen ?? true,
    wakeLingerMs,
  }
  if (!Number.isInteger(wakeLingerMs) || wakeLingerMs < 0)
    throw new Error(`outbox relay: wakeLingerMs must be a non-negative integer (got ${wakeLingerMs})`)
  return settings
}

/** What the relay loop drives. */
interface RelayParts {
  leadership: RelayLeadership
  publisher: OutboxPublisher
  wakeup: RelayWakeup
  logger: OutboxRelayLogger
  settings: RelaySettings
  /** whether commits wake the relay (its LISTEN is in place) */
  listening: () => boolean
}

const initialBackoffMs = 100

/**
 * The relay's loop until stop: stand by until elected, then publish pass after pass; on a failure, back off, and
 * give the session up unless only Kafka failed.
 */
async function runRelay(relay: RelayParts, firstAttemptDone: () => void): Promise<void> {
  const { leadership, publisher, wakeup, logger, settings, listening } = relay
  let backoffMs = 0
  let firstAttempt = true
  const attempted = () => {
    if (firstAttempt) {
      firstAttempt = false
      firstAttemptDone()
    }
  }
  while (!wakeup.stopped) {
    try {
      let lead = leadership.current
      if (!lead) {
        lead = await leadership.tryToLead()
        attempted()
        if (!lead) {
          await wakeup.sleep(settings.leadershipRetryMs, false)
          continue
        }
      }
      // this pass reads every commit notified so far
      wakeup.clear()
      const published = await publisher.publishPending(lead)
      backoffMs = 0
      // a full batch means more rows are probably waiting
      if (published < settings.batchSize)
        await wakeup.sleep(listening() ? settings.pollIntervalMs : settings.unwakedPollIntervalMs, true)
    } catch (error) {
      attempted()
      const wasLeading = leadership.current !== undefined
      if (error instanceof LeadershipLost && wasLeading) {
        logger.warn({ err: error }, 'the outbox relay lost its lock; standing by')
        leadership.retire()
        continue
      }
      backoffMs = backoffMs === 0 ? initialBackoffMs : Math.min(backoffMs * 2, settings.maxBackoffMs)
      if (error instanceof PublishFailed) {
        logger.warn(
          { err: error.cause, retryInMs: backoffMs, unfinishedRows: publisher.unfinishedRows },
          'outbox relay could not publish; rows stay in the outbox',
        )
      } else {
        // a failed statement: nothing more is sent on that connection (see "The session" above)
        leadership.retire()
        logger.warn(
          { err: error, retryInMs: backoffMs },
          wasLeading
            ? 'an outbox relay statement failed; standing by'
            : 'the outbox relay cannot reach the database',
        )
      }
      await wakeup.sleep(backoffMs, false)
    }
  }
}

interface Wait {
  wakeable: boolean
  end(): void
}

/** The relay's pauses: polling and backoff waits, cut short on stop and — the polling ones — by a commit. */
class RelayWakeup {
  #stopped = false
  #wakeRequested = false
  readonly #waits = new Set<Wait>()

  constructor(private readonly wakeLingerMs: number) {}

  get stopped(): boolean {
    return this.#stopped
  }

  /** Resolves after `ms`, on stop, and — when `wakeable` — on a notification (one that came meanwhile counts). */
  sleep(ms: number, wakeable: boolean): Promise<void> {
    if (this.#stopped) return Promise.resolve()
    if (wakeable && this.#wakeRequested) {
      // commits arrived while the last batch was out: take them, and those of the linger, together
      this.#wakeRequested = false
      return new Promise((resolve) => setTimeout(resolve, this.wakeLingerMs))
    }
    return new Promise((resolve) => {
      const wait: Wait = {
        wakeable,
        end: () => {
          clearTimeout(timer)
          this.#waits.delete(wait)
          resolve()
        },
      }
      const timer = setTimeout(() => wait.end(), ms)
      this.#waits.add(wait)
    })
  }

  /** A commit was notified: ends a polling wait, or is remembered for the next one. */
  wake(): void {
    this.#wakeRequested = true
    for (const wait of this.#waits) {
      if (wait.wakeable) {
        this.#wakeRequested = false
        wait.end()
      }
    }
  }

  /** Forgets the notifications so far: the pass about to start reads what they announced. */
  clear(): void {
    this.#wakeRequested = false
  }

  /** Ends every wait, and any later one at once. */
  stop(): void {
    this.#stopped = true
    for (const wait of this.#waits) wait.end()
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0)
    throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}
