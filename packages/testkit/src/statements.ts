// Counting the statements a piece of work sends to PostgreSQL: the services' statement-budget tests (each statement a
// handler awaits is a round trip, the largest cost of a busy consumer), over a pool that reports what it sends.
import type postgres from 'postgres'

/** What a budget test counts with: the pool (give it to the repositories under test) and the count of a piece of work. */
export interface StatementCounter<Pool extends postgres.Sql> {
  sql: Pool
  /**
   * The statements `work` sends — in a transaction of its own and on the pool beside it — without the transaction's
   * begin and commit and postgres.js' one-off read of a connection's array types.
   */
  statementsOf(work: (tx: postgres.TransactionSql) => Promise<unknown>): Promise<string[]>
  end(): Promise<void>
}

/**
 * A counter over the pool `open` makes with the `onQuery` hook it is given (e.g. `(onQuery) =>
 * createDatabase(url, { max: 1, onQuery })`); resolves once the pool's first connection is open, so opening it is
 * not counted.
 */
export async function statementCounter<Pool extends postgres.Sql>(
  open: (onQuery: (query: string) => void) => Pool,
): Promise<StatementCounter<Pool>> {
  const sent: string[] = []
  const sql = open((query) => sent.push(query))
  await sql`select 1`
  return {
    sql,
    async statementsOf(work) {
      sent.length = 0
      await sql.begin((tx) => work(tx))
      return sent.filter((query) => !/^\s*(begin|commit)\s*$/i.test(query) && !/\bb\.typarray\b/.test(query))
    },
    end: () => sql.end(),
  }
}
