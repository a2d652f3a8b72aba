// @meridian/postgres-connection: libpq's TLS parameters of a PostgreSQL URL as postgres.js' ssl option.
export {
  type ConnectionOptionsOptions,
  connectionOptionsOf,
  type PostgresConnection,
  type PostgresSsl,
  PostgresUrlError,
  type SslMode,
  sslModes,
} from './connection-options.ts'
