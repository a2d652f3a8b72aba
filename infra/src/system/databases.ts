// A run's own databases (a system run, API fuzzing): one per service that has one, created empty (the service migrates
// it at start, as main.ts does) and dropped at the end, so a run never writes into a developer's data.
import { databaseUrl, postgresClient } from '../probes.ts'

export interface RunDatabase {
  name: string
  url: string
  drop(): Promise<void>
}

const quiet = { onnotice: () => {} }

/**
 * `urlOf`: the address services are given for it (a multi-host URL across hosts); default on serverUrl. `owner`: the
 * service's own login role on a secure server, which then owns the database (it migrates it) and is the only one but
 * the superuser that may connect to it, as with its standing database (provisionServiceRoles).
 */
export async function createRunDatabase(
  serverUrl: string,
  name: string,
  urlOf?: (database: string) => string,
  owner?: string,
): Promise<RunDatabase> {
  const sql = postgresClient(serverUrl, { max: 1, connect_timeout: 5, ...quiet })
  try {
    await sql`create database ${sql(name)}`
    if (owner) {
      await sql`alter database ${sql(name)} owner to ${sql(owner)}`
      await sql`revoke connect, temporary on database ${sql(name)} from public`
    }
  } finally {
    await sql.end({ timeout: 2 })
  }
  return {
    name,
    url: urlOf ? urlOf(name) : databaseUrl(serverUrl, name),
    async drop() {
      const admin = postgresClient(serverUrl, { max: 1, connect_timeout: 5, ...quiet })
      try {
        // (force): a connection the stopped service left behind must not keep the database alive
        await admin`drop database if exists ${admin(name)} with (force)`
      } finally {
        await admin.end({ timeout: 2 })
      }
    },
  }
}
