// The run's own database: created, migrated with migrateEventTables, emptied between phases, dropped.
import { randomBytes } from 'node:crypto'
import { createDatabase } from '@meridian/db'
import { migrateEventTables } from '@meridian/events'
import { databaseUrl } from '@meridian/infra'

export interface EventsDatabase {
  name: string
  url: string
  /** empties outbox and inbox, so every phase starts from the same tables */
  reset(): Promise<void>
  drop(): Promise<void>
}

export async function createEventsDatabase(serverUrl: string): Promise<EventsDatabase> {
  const name = `bench_events_${randomBytes(6).toString('hex')}`
  const admin = createDatabase(serverUrl, { max: 1, applicationName: 'bench-events-admin' })
  try {
    await admin`create database ${admin(name)}`
  } finally {
    await admin.end({ timeout: 5 })
  }
  const url = databaseUrl(serverUrl, name)
  const sql = createDatabase(url, { max: 1, applicationName: 'bench-events-setup' })

  let dropped: Promise<void> | undefined
  const drop = () => {
    dropped ??= (async () => {
      await sql.end({ timeout: 5 })
      const dropper = createDatabase(serverUrl, { max: 1, applicationName: 'bench-events-admin' })
      try {
        await dropper`drop database if exists ${dropper(name)} with (force)`
      } finally {
        await dropper.end({ timeout: 5 })
      }
    })()
    return dropped
  }

  try {
    await migrateEventTables(sql)
  } catch (error) {
    await drop()
    throw error
  }

  return {
    name,
    url,
    async reset() {
      await sql`truncate outbox, inbox`
      await sql`vacuum analyze outbox`
      await sql`vacuum analyze inbox`
    },
    drop,
  }
}
