// @meridian/db: postgres.js client, transactions, numbered SQL migrations under a lock, database-error mapping.
export {
  createDatabase,
  type DatabaseOptions,
  type Queryable,
  type Sql,
  type TransactionSql,
} from './database.ts'
export {
  databaseErrorMapper,
  isDatabaseError,
  isDatabaseUnavailable,
  mapDatabaseError,
} from './database-error.ts'
export {
  MIGRATION_LOCK_NAME,
  type MigrateOptions,
  type MigrateResult,
  type MigrationLogger,
  migrate,
} from './migrate.ts'
export { type MigrateCommandOptions, runMigrateCommand } from './migrate-command.ts'
export { MigrationError } from './migration-error.ts'
export { pingDatabase } from './ping.ts'
export { transaction } from './transaction.ts'
