// A bounded round trip to the database, for readiness and health checks.
import type { Queryable } from './database.ts'
import { databaseErrorMapper } from './database-error.ts'

/** Resolves when the database answers `select 1` within `timeoutMs`; rejects otherwise (the query is cancelled). */
export async function pingDatabase(sql: Queryable, timeoutMs = 2000): Promise<void> {
  const query = sql`select 1`
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // A ping stuck behind a busy pool or a dead connection must not stay queued after we gave up on it.
      void Promise.resolve(query.cancel()).catch(() => {})
      reject(new Error(`the database did not answer within ${timeoutMs} ms`))
    }, timeoutMs)
  })
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
