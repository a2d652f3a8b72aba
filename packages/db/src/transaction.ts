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

/**
 * Takes the transaction-scoped advisory lock named `key` (hashed to PostgreSQL's 64-bit lock space): another
 * transaction taking the same key waits until this one ends. For work on one thing that must not interleave across
 * processes (an order's charge and refund, its reservation and release).
 */
export async function lockKey(tx: TransactionSql, key: string): Promise<void> {
  await tx`select 1 from pg_advisory_xact_lock(hashtextextended(${key}, 0))`
}

/** As lockKey, but never waits: false when another transaction holds the key. */
export async function tryLockKey(tx: TransactionSql, key: string): Promise<boolean> {
  const [row] = await tx<
    { locked: boolean }[]
  >`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as locked`
  return row?.locked ?? false
}
