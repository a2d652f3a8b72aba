// The provider's webhook events received, in PostgreSQL (migrations/0007): SQL only; every function takes the pool or
// an open transaction. An event is recorded once by its id: the first insert wins, a redelivery finds it there.
import type { Queryable } from '@meridian/db'

export interface NewProviderEvent {
  eventId: string
  type: string
  paymentIntent: string | undefined
  outcome: string
}

export function createProviderEventsRepository(db: Queryable) {
  return {
    /** Whether the event was recorded already. */
    async exists(eventId: string, sql: Queryable = db): Promise<boolean> {
      const [row] = await sql<{ found: boolean }[]>`
        select exists (select 1 from provider_events where event_id = ${eventId}) as found`
      return row?.found ?? false
    },

    /** Records the event; false when it was recorded already (a redelivery), and then nothing is written. */
    async recordOnce(event: NewProviderEvent, sql: Queryable = db): Promise<boolean> {
      const inserted = await sql`
        insert into provider_events (event_id, type, payment_intent, outcome)
        values (${event.eventId}, ${event.type}, ${event.paymentIntent ?? null}, ${event.outcome})
        on conflict (event_id) do nothing
        returning event_id`
      return inserted.length === 1
    },
  }
}

export type ProviderEventsRepository = ReturnType<typeof createProviderEventsRepository>
