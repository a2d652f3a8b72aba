// A database of one benchmark run: created on the server, dropped (once, with force) when the run ends.
import { randomBytes } from 'node:crypto'
import { createDatabase, type Sql } from '@meridian/db'
import { databaseUrl } from '@meridian/infra'

export interface RunDatabase {
  name: string
  url: string
  /** a small pool on the run's database, for setup and resets; closed by drop() */
  sql: Sql
  drop(): Promise<void>
}

/**
 * Creates the run's database and migrates it with `migrate` (a service's own migrate function); a database whose
 * migration failed is dropped before the error is passed on.
 */
export async function createRunDatabase(
  serverUrl: string,
  prefix: string,
  migrate?: (sql: Sql) => Promise<unknown>,
): Promise<RunDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  const admin = createDatabase(serverUrl, { max: 1, applicationName: `${prefix}-admin` })
  try {
    await admin`create database ${admin(name)}`
  } finally {
    await admin.end({ timeout: 5 })
  }
  const url = databaseUrl(serverUrl, name)
  const sql = createDatabase(url, { max: 2, applicationName: `${prefix}-setup` })

  let dropped: Promise<void> | undefined
  const drop = () => {
    dropped ??= (async () => {
      await sql.end({ timeout: 5 })
      const dropper = createDatabase(serverUrl, { max: 1, applicationName: `${prefix}-admin` })
      try {
        await dropper`drop database if exists ${dropper(name)} with (force)`
      } finally {
        await dropper.end({ timeout: 5 })
      }
    })()
    return dropped
  }
  try {
    await migrate?.(sql)
  } catch (error) {
    await drop()
    throw error
  }
  return { name, url, sql, drop }
}
