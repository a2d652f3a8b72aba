// A bounded round trip to the database, for readiness and health checks.
import type { Queryable } from './database.ts'
import { databaseErrorMapper } from './database-error.ts'

/**
 * Resolves when the database answers `select 1` within `timeoutMs`; rejects otherwise. A late ping is left to finish
 * rather than cancelled: PostgreSQL's cancel request stops whatever the connection runs when it arrives, which, once
 * the ping has answered, is the next statement on that connection (a fresh run saw a later query cancelled so). An
 * unanswered `select 1` costs the pool nothing, and a dead connection fails it with everything else queued on it.
 */
export async function pingDatabase(sql: Queryable, timeoutMs = 2000): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the database did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  const query = sql`select 1`
  // given up on, its outcome is nobody's
  query.catch(() => {})
  try {
    await Promise.race([query, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The service's database as the chassis takes it (createServiceApp's `database`): readiness pings it, and its errors
 * become their AppError (databaseErrorMapper) before the error table applies.
 */
export function chassisDatabase(sql: Queryable): {
  check: () => Promise<void>
  mapError: typeof databaseErrorMapper
} {
  return { check: () => pingDatabase(sql), mapError: databaseErrorMapper }
}
