// Runs a unit of work in one database transaction, e.g. a business write together with its outbox row.
import type { Sql, TransactionSql } from './database.ts'

/**
 * Commits when `fn` resolves and rolls back when it rejects (the rejection is passed on unchanged).
 * Every statement of the unit must go through `tx`; a query on `sql` would run outside the transaction.
 */
export async function transaction<T>(sql: Sql, fn: (tx: TransactionSql) => Promise<T>): Promise<T> {
  // begin() types its result for callbacks that return an array of pending queries; fn returns a plain T.
  return (await sql.begin((tx) => fn(tx))) as T
}
