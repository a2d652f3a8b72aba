// The outbox relay's leadership: one active relay per database, elected by a session advisory lock held on a
// connection of its own (why, in detail: the comment on createOutboxRelay).
import type { Sql } from '@meridian/db'
import postgres from 'postgres'
import type { OutboxRelayLogger } from './outbox-relay-logger.ts'

/** Name of the session advisory lock the active relay holds; the key is `hashtext(OUTBOX_RELAY_LOCK_NAME)`. */
export const OUTBOX_RELAY_LOCK_NAME = 'meridian:outbox-relay'

/** This relay's session was closed or replaced: the advisory lock went with it. */
export class LeadershipLost extends Error {
  constructor(reason: string) {
    super(`no longer the active outbox relay: ${reason}`)
    this.name = 'LeadershipLost'
  }
}

/** The relay's own database connection: a one-connection client, used until its connection first closes. */
interface RelaySession {
  db: Sql
  closed: boolean
  /** statements in flight, failed when the connection closes */
  closeListeners: Set<() => void>
}

/** The session that took the lock; its statements are the active relay's. */
export interface Leadership {
  session: RelaySession
  /** the backend holding the lock */
  pid: number
}

/** What publishing needs of the leadership: statements as the leader, and giving the session up. */
export interface LeaderStatements {
  asLeader<T>(lead: Leadership, statement: () => PromiseLike<T>): Promise<T>
  retire(): void
}

/**
 * Elects this relay, and keeps the one session it leads on: opens it, tries the lock on it, runs the active relay's
 * statements on it only while its connection lives, and ends it — with the lock — when anything fails.
 */
export class RelayLeadership implements LeaderStatements {
  #session: RelaySession | undefined
  #leadership: Leadership | undefined

  /** `onElected` runs each time this relay becomes the active one, before its first pass. */
  constructor(
    private readonly sql: Sql,
    private readonly logger: OutboxRelayLogger,
    private readonly onElected: () => Promise<void>,
  ) {}

  /** the leadership in hand, if this relay took the lock and has not lost or given it up since */
  get current(): Leadership | undefined {
    return this.#leadership
  }

  /** true while this instance is the active relay of its database */
  isLeader(): boolean {
    const lead = this.#leadership
    return lead !== undefined && lead.session === this.#session && !lead.session.closed
  }

  /** One attempt at the lock, on a new session when the last one's connection closed; undefined: another leads. */
  async tryToLead(): Promise<Leadership | undefined> {
    // a session whose connection ever closed is not reused (see "The session" on createOutboxRelay)
    if (this.#session?.closed) this.retire()
    this.#session ??= openRelaySession(this.sql)
    const current = this.#session
    const [attempt] = await onSession(
      current,
      current.db<{ locked: boolean; pid: number }[]>`
        select pg_try_advisory_lock(hashtext(${OUTBOX_RELAY_LOCK_NAME})) as locked, pg_backend_pid() as pid`,
    )
    if (!attempt?.locked) return undefined
    const lead: Leadership = { session: current, pid: attempt.pid }
    this.#leadership = lead
    this.logger.info(
      { lock: OUTBOX_RELAY_LOCK_NAME, pid: attempt.pid },
      'this instance is now the active outbox relay',
    )
    await this.onElected()
    return lead
  }

  /** A statement of the active relay: only on the session that took the lock, while its connection lives. */
  asLeader<T>(lead: Leadership, statement: () => PromiseLike<T>): Promise<T> {
    if (lead.session !== this.#session || lead.session.closed) {
      return Promise.reject(new LeadershipLost('its database connection closed'))
    }
    return onSession(lead.session, statement())
  }

  /** Ends the session, and with it the lock, without another statement; ending also settles a hung statement. */
  retire(): void {
    const retired = this.#session
    this.#session = undefined
    this.#leadership = undefined
    if (retired) {
      retired.closed = true
      void retired.db.end({ timeout: 1 }).catch(() => {})
    }
  }

  /** Gives the lock up when leading, and ends the session (which releases the lock in any case). */
  async resign(): Promise<void> {
    const lead = this.#leadership
    if (lead) {
      const { db } = lead.session
      await this.asLeader(
        lead,
        () => db`select pg_advisory_unlock(hashtext(${OUTBOX_RELAY_LOCK_NAME}))`,
      ).catch(() => {})
    }
    const closing = this.#session
    this.#session = undefined
    this.#leadership = undefined
    await closing?.db.end({ timeout: 5 })
  }
}

/** A one-connection client made from the pool's options, as postgres.js makes its LISTEN connection. */
export function oneConnectionClient(sql: Sql, onclose: () => void = () => {}): Sql {
  // `shared` in sql.options makes postgres() take them as already parsed, as sql.listen() does.
  const options = { ...sql.options, max: 1, idle_timeout: null, max_lifetime: null, onclose }
  return postgres(options as unknown as postgres.Options<Record<string, postgres.PostgresType>>)
}

function openRelaySession(sql: Sql): RelaySession {
  const opened: RelaySession = { db: sql, closed: false, closeListeners: new Set() }
  opened.db = oneConnectionClient(sql, () => {
    opened.closed = true
    for (const fail of opened.closeListeners) fail()
  })
  return opened
}

/** Runs a statement on the session; fails at once if the connection closes meanwhile, even if postgres.js does not. */
async function onSession<T>(current: RelaySession, statement: PromiseLike<T>): Promise<T> {
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
