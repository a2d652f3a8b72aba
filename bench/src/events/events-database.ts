// The run's own database: created, migrated with migrateEventTables, emptied between phases, dropped.
import { migrateEventTables } from '@meridian/events'
import { createRunDatabase } from '../run-database.ts'

export interface EventsDatabase {
  name: string
  url: string
  /** empties outbox and inbox, so every phase starts from the same tables */
  reset(): Promise<void>
  drop(): Promise<void>
}

export async function createEventsDatabase(serverUrl: string): Promise<EventsDatabase> {
  const { name, url, sql, drop } = await createRunDatabase(serverUrl, 'bench_events', migrateEventTables)

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
