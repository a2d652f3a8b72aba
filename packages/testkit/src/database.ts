// PostgreSQL for tests: a database of its own per test file on the real server, dropped when the file is done.
import { databaseUrl, postgresClient } from '@meridian/infra'
import type postgres from 'postgres'
import { infraEndpoints } from './endpoints.ts'
import { uniqueName } from './unique-name.ts'

export interface TestDatabase {
  name: string
  url: string
  /** a postgres.js client on this database (closed by drop) */
  sql: postgres.Sql
  drop(): Promise<void>
}

/** A new, empty database of its own on the real server; drop() removes it. */
export async function freshDatabase(label = 'test'): Promise<TestDatabase> {
  const serverUrl = infraEndpoints().databaseUrl
  const name = uniqueName(`t_${label}`)
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 63)
  const admin = postgresClient(serverUrl, { max: 1, onnotice: () => {} })
  try {
    await admin`create database ${admin(name)}`
  } finally {
    await admin.end({ timeout: 5 })
  }
  const url = databaseUrl(serverUrl, name)
  const sql = postgresClient(url, { max: 4, onnotice: () => {} })
  return {
    name,
    url,
    sql,
    async drop() {
      await sql.end({ timeout: 5 })
      const dropper = postgresClient(serverUrl, { max: 1, onnotice: () => {} })
      try {
        await dropper`drop database if exists ${dropper(name)} with (force)`
      } finally {
        await dropper.end({ timeout: 5 })
      }
    },
  }
}
