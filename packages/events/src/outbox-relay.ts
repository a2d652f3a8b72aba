// OutboxRelay: publishes committed outbox rows to Kafka in id order, with one active relay per database.
import type { Sql } from '@meridian/db'
import postgres from 'postgres'
import type { EventMetrics } from './event-metrics.ts'
import type { EventProducer, OutgoingMessage } from './kafka.ts'
import { OUTBOX_CHANNEL } from './outbox.ts'

/** Name of the session advisory lock the active relay holds; the key is `hashtext(OUTBOX_RELAY_LOCK_NAME)`. */
export const OUTBOX_RELAY_LOCK_NAME = 'meridian:outbox-relay'

/** Any pino logger fits (pino's (obj, msg) call shape). */
export interface OutboxRelayLogger {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

/** A row Kafka has acknowledged, as told to `onPublished`. */
export interface PublishedOutboxRow {
  /** bigint as text; the message's `message-id` header is `outbox-{outboxId}` */
  outboxId: string
  /** the envelope id, by which consumers deduplicate */
  eventId: string
  eventType: string
  aggregateId: string
  createdAt: Date
}

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
  /** how often the active relay looks for rows when nothing wakes it; default 100 ms */
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

interface OutboxRow {
  outboxId: string
  eventType: string
  aggregateId: string
  eventId: string
  payload: string
  createdAt: Date
}

/** This relay's session was closed or replaced: the advisory lock went with it. */
class LeadershipLost extends Error {
  constructor(reason: string) {
    super(`no longer the active outbox relay: ${reason}`)
    this.name = 'LeadershipLost'
  }
}

/** Kafka (or the onPublished hook) failed; the database session is fine. */
class PublishFailed extends Error {
  constructor(cause: unknown) {
    super(`publishing failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = 'PublishFailed'
  }
}

/** The relay's own database connection: a one-connection client, used until its connection first closes. */
interface Session {
  db: Sql
  closed: boolean
  /** statements in flight, failed when the connection closes */
  closeListeners: Set<() => void>
}

interface Leadership {
  session: Session
  /** the backend holding the lock */
  pid: number
}

interface Wait {
  wakeable: boolean
  end(): void
}

const initialBackoffMs = 100
const maxCleanupIntervalMs = 60_000
const rollbackTimeoutMs = 5000

/**
 * Ordering. Rows are published in id order, so the events of one aggregate reach their partition in the order they
 * were appended — as long as a single relay publishes at a time. Several instances of a service each run a relay;
 * `for update skip locked` alone would let a second relay skip the rows the first has locked and publish newer rows
 * of the same aggregate before them. So only ONE RELAY PER DATABASE IS ACTIVE: it holds a PostgreSQL session
 * advisory lock for as long as its session lives. The others are standbys that try `pg_try_advisory_lock` every
 * `leadershipRetryMs` and take over when the active relay stops or its process or connection dies (the server then
 * ends the session and releases the lock). We chose this over partitioning rows by key hash among relays: it needs no
 * membership protocol or rebalancing when instances come and go, and one relay publishing in batches keeps up with
 * one service's database. The row locks stay as a second guard against publishing a row twice at once.
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
  const { sql, producer, logger, metrics, onPublished } = options
  const topicPrefix = options.topicPrefix ?? ''
  const batchSize = positiveInteger('batchSize', options.batchSize ?? 100)
  const pollIntervalMs = positiveInteger('pollIntervalMs', options.pollIntervalMs ?? 100)
  const leadershipRetryMs = positiveInteger('leadershipRetryMs', options.leadershipRetryMs ?? 1000)
  const maxBackoffMs = positiveInteger('maxBackoffMs', options.maxBackoffMs ?? 5000)
  const retentionMs = positiveInteger('retentionMs', options.retentionMs ?? 7 * 24 * 60 * 60 * 1000)
  const mode = options.mode ?? 'delete'
  const listen = options.listen ?? true
  const wakeLingerMs = options.wakeLingerMs ?? 5
  if (!Number.isInteger(wakeLingerMs) || wakeLingerMs < 0)
    throw new Error(`outbox relay: wakeLingerMs must be a non-negative integer (got ${wakeLingerMs})`)
  const cleanupIntervalMs = Math.min(retentionMs, maxCleanupIntervalMs)

  let session: Session | undefined
  let leadership: Leadership | undefined
  let listener: { unlisten(): Promise<void> } | undefined
  let running: Promise<void> | undefined
  let stopping = false
  /**
   * The batch whose publishing failed: sent again, unchanged, before anything newer. Kept across a change of session,
   * since it is this relay's producer whose numbering must match.
   */
  let unfinishedBatch: string[] | undefined
  let lastCleanupAt = 0
  let lastMeasuredAt = 0
  // how often the pending-rows and lag gauges are recounted
  const gaugeIntervalMs = 1000
  let wakeRequested = false
  const waits = new Set<Wait>()

  function openSession(): Session {
    const opened: Session = { db: sql, closed: false, closeListeners: new Set() }
    // `shared` in sql.options makes postgres() take them as already parsed, as sql.listen() does.
    const sessionOptions = {
      ...sql.options,
      max: 1,
      idle_timeout: null,
      max_lifetime: null,
      onclose: () => {
        opened.closed = true
        for (const fail of opened.closeListeners) fail()
      },
    }
    opened.db = postgres(sessionOptions as unknown as postgres.Options<Record<string, postgres.PostgresType>>)
    return opened
  }

  /** Ends the session, and with it the lock, without another statement; ending also settles a hung statement. */
  function retireSession(): void {
    const retired = session
    session = undefined
    leadership = undefined
    if (retired) {
      retired.closed = true
      void retired.db.end({ timeout: 1 }).catch(() => {})
    }
  }

  /** Runs a statement on the session; fails at once if the connection closes meanwhile, even if postgres.js does not. */
  async function onSession<T>(current: Session, statement: PromiseLike<T>): Promise<T> {
    if (current.closed) throw new LeadershipLost('its database connection closed')
    let fail = () => {}
    const closed = new Promise<never>((_, reject) => {
      fail = () => reject(new LeadershipLost('its database connection closed'))
    })
    current.closeListeners.add(fail)
    try {
      return await Promise.race([statement, closed])
    } finally {
      current.closeListeners.delete(fail)
    }
  }

  /** A statement of the active relay: only on the session that took the lock, while its connection lives. */
  function asLeader<T>(lead: Leadership, statement: () => PromiseLike<T>): Promise<T> {
    if (lead.session !== session || lead.session.closed) {
      return Promise.reject(new LeadershipLost('its database connection closed'))
    }
    return onSession(lead.session, statement())
  }

  /** Resolves after `ms`, on stop, and — when `wakeable` — on a notification (one that came meanwhile counts). */
  function sleep(ms: number, wakeable: boolean): Promise<void> {
    if (stopping) return Promise.resolve()
    if (wakeable && wakeRequested) {
      // commits arrived while the last batch was out: take them, and those of the linger, together
      wakeRequested = false
      return new Promise((resolve) => setTimeout(resolve, wakeLingerMs))
    }
    return new Promise((resolve) => {
      const wait: Wait = {
        wakeable,
        end() {
          clearTimeout(timer)
          waits.delete(wait)
          resolve()
        },
      }
      const timer = setTimeout(() => wait.end(), ms)
      waits.add(wait)
    })
  }

  function wake(): void {
    wakeRequested = true
    for (const wait of waits) {
      if (wait.wakeable) {
        wakeRequested = false
        wait.end()
      }
    }
  }

  async function tryToLead(current: Session): Promise<boolean> {
    const [attempt] = await onSession(
      current,
      current.db<{ locked: boolean; pid: number }[]>`
        select pg_try_advisory_lock(hashtext(${OUTBOX_RELAY_LOCK_NAME})) as locked, pg_backend_pid() as pid`,
    )
    if (!attempt?.locked) return false
    leadership = { session: current, pid: attempt.pid }
    lastCleanupAt = 0
    lastMeasuredAt = 0
    logger.info(
      { lock: OUTBOX_RELAY_LOCK_NAME, pid: attempt.pid },
      'this instance is now the active outbox relay',
    )
    if (listen && !listener) {
      try {
        listener = await sql.listen(OUTBOX_CHANNEL, wake)
      } catch (error) {
        logger.warn({ err: error }, 'cannot listen for outbox commits; relying on polling')
      }
    }
    return true
  }

  /** One pass as the active relay; resolves to the number of rows published. */
  async function relayOnce(lead: Leadership): Promise<number> {
    const { db } = lead.session
    wakeRequested = false
    // Counting the backlog costs a scan of the unpublished rows: the gauges are refreshed at most once a second;
    // the other passes only ask whether there is anything to publish.
    const measure = Date.now() - lastMeasuredAt >= gaugeIntervalMs
    const [state] = await asLeader(lead, () =>
      measure
        ? db<{ pid: number; pending: number; lagSeconds: number }[]>`
            select pg_backend_pid() as pid, count(*)::int as pending,
              coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as "lagSeconds"
            from outbox where not published`
        : db<{ pid: number; pending: number; lagSeconds: number }[]>`
            select pg_backend_pid() as pid,
              (exists (select 1 from outbox where not published))::int as pending, 0::float8 as "lagSeconds"`,
    )
    // the connection was replaced without our noticing: the lock stayed with the old one
    if (!state || state.pid !== lead.pid) throw new LeadershipLost('its database connection was replaced')
    if (measure) {
      lastMeasuredAt = Date.now()
      metrics?.outboxPending.set(state.pending)
      metrics?.outboxLagSeconds.set(Math.max(0, state.lagSeconds))
    }

    if (mode === 'mark' && Date.now() - lastCleanupAt >= cleanupIntervalMs) await removeExpired(lead)
    if (state.pending === 0) {
      unfinishedBatch = undefined
      return 0
    }

    await asLeader(lead, () => db`begin`)
    try {
      const published = await publishBatch(lead)
      await asLeader(lead, () => db`commit`)
      unfinishedBatch = undefined
      return published
    } catch (error) {
      // Only a publishing failure leaves the connection trusted: end the transaction so the rows unlock.
      if (error instanceof PublishFailed) {
        let timer: NodeJS.Timeout | undefined
        const rolledBack = await Promise.race([
          asLeader(lead, () => db`rollback`).then(
            () => true,
            () => false,
          ),
          new Promise<false>((resolve) => {
            timer = setTimeout(resolve, rollbackTimeoutMs, false)
          }),
        ])
        clearTimeout(timer)
        if (!rolledBack) retireSession()
      }
      throw error
    }
  }

  async function publishBatch(lead: Leadership): Promise<number> {
    const { db } = lead.session
    const retrying = unfinishedBatch
    const rows = await asLeader(lead, () =>
      retrying
        ? db<OutboxRow[]>`
            select id::text as "outboxId", event_type as "eventType", aggregate_id as "aggregateId",
              payload->>'id' as "eventId", payload::text as payload, created_at as "createdAt"
            from outbox where id = any(${db.array(retrying)}::bigint[]) and not published
            order by id for update skip locked`
        : db<OutboxRow[]>`
            select id::text as "outboxId", event_type as "eventType", aggregate_id as "aggregateId",
              payload->>'id' as "eventId", payload::text as payload, created_at as "createdAt"
            from outbox where not published
            order by id limit ${batchSize} for update skip locked`,
    )
    if (rows.length === 0) return 0
    const ids = rows.map((row) => row.outboxId)
    unfinishedBatch = ids

    try {
      await producer.publish(rows.map((row) => toMessage(row, topicPrefix)))
    } catch (error) {
      throw new PublishFailed(error)
    }
    if (metrics) {
      for (const [type, count] of countByTopic(rows))
        metrics.published.inc({ topic: topicPrefix + type }, count)
    }
    try {
      await onPublished?.(rows.map(toPublished))
    } catch (error) {
      throw new PublishFailed(error)
    }

    await asLeader(lead, () =>
      mode === 'delete'
        ? db`delete from outbox where id = any(${db.array(ids)}::bigint[])`
        : db`update outbox set published = true, published_at = now() where id = any(${db.array(ids)}::bigint[])`,
    )
    return rows.length
  }

  async function removeExpired(lead: Leadership): Promise<void> {
    const { db } = lead.session
    const removed = await asLeader(
      lead,
      () => db`
        delete from outbox
        where published and published_at < now() - ${retentionMs}::float8 * interval '1 millisecond'`,
    )
    lastCleanupAt = Date.now()
    if (removed.count > 0)
      logger.info({ removed: removed.count }, 'removed published outbox rows past retention')
  }

  async function run(firstAttemptDone: () => void): Promise<void> {
    let backoffMs = 0
    let firstAttempt = true
    while (!stopping) {
      try {
        if (!leadership) {
          // a session whose connection ever closed is not reused (see "The session" above)
          if (session?.closed) retireSession()
          session ??= openSession()
          const leading = await tryToLead(session)
          if (firstAttempt) {
            firstAttempt = false
            firstAttemptDone()
          }
          if (!leading) {
            await sleep(leadershipRetryMs, false)
            continue
          }
        }
        const published = await relayOnce(leadership!)
        backoffMs = 0
        // a full batch means more rows are probably waiting
        if (published < batchSize) await sleep(pollIntervalMs, true)
      } catch (error) {
        if (firstAttempt) {
          firstAttempt = false
          firstAttemptDone()
        }
        const wasLeading = leadership !== undefined
        if (error instanceof LeadershipLost && wasLeading) {
          logger.warn({ err: error }, 'the outbox relay lost its lock; standing by')
          retireSession()
          continue
        }
        backoffMs = backoffMs === 0 ? initialBackoffMs : Math.min(backoffMs * 2, maxBackoffMs)
        if (error instanceof PublishFailed) {
          logger.warn(
            { err: error.cause, retryInMs: backoffMs, unfinishedRows: unfinishedBatch?.length ?? 0 },
            'outbox relay could not publish; rows stay in the outbox',
          )
        } else {
          // a failed statement: nothing more is sent on that connection (see "The session" above)
          retireSession()
          logger.warn(
            { err: error, retryInMs: backoffMs },
            wasLeading
              ? 'an outbox relay statement failed; standing by'
              : 'the outbox relay cannot reach the database',
          )
        }
        await sleep(backoffMs, false)
      }
    }
  }

  return {
    start() {
      if (running) throw new Error('this outbox relay was already started')
      return new Promise<void>((firstAttemptDone) => {
        running = run(firstAttemptDone).catch((error: unknown) => {
          // run() handles its errors itself; reaching this is a bug, and relaying has stopped
          logger.error({ err: error }, 'the outbox relay stopped unexpectedly')
          firstAttemptDone()
        })
      })
    },

    async stop() {
      stopping = true
      for (const wait of waits) wait.end()
      await running
      const lead = leadership
      if (lead) {
        const { db } = lead.session
        await asLeader(lead, () => db`select pg_advisory_unlock(hashtext(${OUTBOX_RELAY_LOCK_NAME}))`).catch(
          () => {},
        )
      }
      const closing = session
      session = undefined
      leadership = undefined
      await listener?.unlisten().catch(() => {})
      listener = undefined
      // ending the session releases the lock in any case
      await closing?.db.end({ timeout: 5 })
    },

    isLeader() {
      return leadership !== undefined && leadership.session === session && !leadership.session.closed
    },
  }
}

function toMessage(row: OutboxRow, topicPrefix: string): OutgoingMessage {
  return {
    topic: `${topicPrefix}${row.eventType}`,
    key: row.aggregateId,
    value: row.payload,
    headers: { 'message-id': `outbox-${row.outboxId}` },
  }
}

function toPublished(row: OutboxRow): PublishedOutboxRow {
  return {
    outboxId: row.outboxId,
    eventId: row.eventId,
    eventType: row.eventType,
    aggregateId: row.aggregateId,
    createdAt: row.createdAt,
  }
}

function countByTopic(rows: OutboxRow[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const row of rows) counts.set(row.eventType, (counts.get(row.eventType) ?? 0) + 1)
  return counts
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0)
    throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}
