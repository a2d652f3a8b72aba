// @meridian/db: postgres.js client, transactions, list queries, numbered SQL migrations under a lock, error mapping.

export { connectionOptionsOf, PostgresUrlError, type SslMode } from '@meridian/postgres-connection'
export {
  createDatabase,
  type DatabaseOptions,
  defaultIdleInTransactionTimeoutMs,
  type Fragment,
  type Queryable,
  type Sql,
  type TransactionSql,
} from './database.ts'
export {
  databaseErrorMapper,
  isDatabaseError,
  isDatabaseUnavailable,
  isUniqueViolation,
  mapDatabaseError,
} from './database-error.ts'
export {
  defineList,
  type FilterValue,
  type ListDefinition,
  type ListEnvelope,
  type ListInput,
  type ListLinkQuery,
  type ListRequest,
  type ListRequestOf,
  type ListResult,
  type ListRow,
  type ListSearch,
  type ListSpec,
  type ListStatements,
  listEnvelope,
  type SortDirection,
  type SortKey,
  type SortSpec,
  type TsQuerySyntax,
} from './list-query.ts'
export {
  MIGRATE_CONTRACT_ENV,
  MIGRATION_LOCK_NAME,
  type MigrateOptions,
  type MigrateResult,
  type MigrationLogger,
  migrate,
  migrationTrack,
  splitStatements,
} from './migrate.ts'
export { type MigrateCommandOptions, runMigrateCommand } from './migrate-command.ts'
export { MigrationError } from './migration-error.ts'
export {
  type MigrationFile,
  type MigrationPhase,
  migrationMarks,
  readMigrationFiles,
} from './migration-files.ts'
export { chassisDatabase, pingDatabase } from './ping.ts'
export { tracedRepository } from './traced-repository.ts'
export { lockKey, transaction, tryLockKey } from './transaction.ts'
