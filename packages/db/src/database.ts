// The postgres.js client factory and the types repositories use to accept either a pool or a transaction.
import { connectionOptionsOf } from '@meridian/postgres-connection'
import postgres from 'postgres'

export type Sql = postgres.Sql
export type TransactionSql = postgres.TransactionSql
/** What a repository function takes, so its caller may pass the pool or an open transaction. */
export type Queryable = Sql | TransactionSql
/** A piece of SQL built with a tagged template, to be composed into a statement (or sent as one). */
export type Fragment = postgres.PendingQuery<postgres.Row[]>

/** How long a connection may sit idle in an open transaction, by default (DatabaseOptions.idleInTransactionTimeoutMs). */
export const defaultIdleInTransactionTimeoutMs = 60_000

export interface DatabaseOptions {
  /** pool size; default 10 */
  max?: number
  /** seconds an unused connection stays open; default 30 */
  idleTimeoutSeconds?: number
  /** seconds to wait for a connection to open; default 10 */
  connectTimeoutSeconds?: number
  /** shown in pg_stat_activity, so a connection can be traced to its service; default 'meridian' */
  applicationName?: string
  /**
   * ms a connection may sit in an open transaction without sending anything before the server ends it, rolling the
   * transaction back and letting go of its locks; default 60,000 (PostgreSQL's idle_in_transaction_session_timeout).
   * A process that dies with a transaction open on a host that is gone sends no FIN: without this its transaction,
   * and every lock it holds, lives on in the server until TCP keepalive gives up on it — hours.
   */
  idleInTransactionTimeoutMs?: number
  /**
   * ms a statement may wait for a lock before it fails (PostgreSQL's lock_timeout); default none. For a pool whose
   * statements are never meant to wait for a transaction (a wait there is a deadlock PostgreSQL cannot see, one end of
   * which waits in the application): the wait becomes an error instead of a hang.
   */
  lockTimeoutMs?: number
  /** called with each statement's text as it is sent (tests counting statements; never in production) */
  onQuery?: (query: string) => void
  /** what a configuration error calls the URL: the variable it came from; default 'the PostgreSQL URL' */
  urlSource?: string
}

/**
 * A connection pool on `url`. Connections open lazily on the first query; close the pool with `sql.end()`.
 * Result column names are camelCased (`created_at` -> `createdAt`) so repositories return plain camelCase objects;
 * interpolated identifiers are left as written, so SQL keeps its snake_case names.
 *
 * libpq's TLS parameters in the URL (`sslmode=verify-full&sslrootcert=/etc/meridian/pg-ca.pem`, sslcert, sslkey)
 * are applied (@meridian/postgres-connection): their files are read now, and a missing or unreadable one, or a
 * wrong mode, throws a PostgresUrlError naming the parameter (and `urlSource`) before any connection is tried.
 */
export function createDatabase(url: string, options: DatabaseOptions = {}): Sql {
  const connection = connectionOptionsOf(url, options.urlSource ? { source: options.urlSource } : {})
  return postgres(connection.url, {
    ...(connection.ssl === undefined ? {} : { ssl: connection.ssl }),
    max: options.max ?? 10,
    idle_timeout: options.idleTimeoutSeconds ?? 30,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    // NOTICEs (e.g. "relation already exists, skipping") would otherwise be printed with console.log.
    onnotice: () => {},
    connection: {
      application_name: options.applicationName ?? 'meridian',
      idle_in_transaction_session_timeout:
        options.idleInTransactionTimeoutMs ?? defaultIdleInTransactionTimeoutMs,
      ...(options.lockTimeoutMs === undefined ? {} : { lock_timeout: options.lockTimeoutMs }),
    },
    transform: { column: { from: postgres.toCamel } },
    ...(options.onQuery ? { debug: (_connection: number, query: string) => options.onQuery?.(query) } : {}),
  })
}
