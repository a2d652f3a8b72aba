// A run's own Redis database number on the shared server: its sessions, revocations and counters meet nobody else's.

/** The database a system run uses, shared by its services (they follow each other's revocations); api-fuzz uses 15. */
export const systemRedisDatabase = 14

export function withRedisDatabase(redisUrl: string, database: number): string {
  const url = new URL(redisUrl)
  url.pathname = `/${database}`
  return url.toString()
}
