// How loaded the order sagas are, for the admission of new orders (domain/admission.ts): one statement over the process
// module's rows of type `order`, served by its (type, state, created_at) index. SQL only.
import type { Queryable } from '@meridian/db'

/** The order sagas now: those in flight (a forward step awaited), and those shipped within the window. */
export interface SagaLoad {
  inFlight: number
  shippedInWindow: number
}

/** The forward states: a step of the saga is awaited. */
const inFlightStates = ['created', 'payment_processed', 'inventory_reserved']

/**
 * The sagas in flight — but a payment waiting for its customer's 3-D Secure answer, which waits on a person, not on
 * the system — and those shipped within the last `windowMs` (of those placed in the last minute beside it: an order
 * that took longer is the exception the window's rate does not need).
 */
export async function readSagaLoad(sql: Queryable, windowMs: number): Promise<SagaLoad> {
  const [row] = await sql<{ inFlight: number; shippedInWindow: number }[]>`
    select
      count(*) filter (
        where state in ${sql(inFlightStates)} and coalesce(data ->> 'authenticateUrl', '') = ''
      )::int as in_flight,
      count(*) filter (
        where state = 'shipped' and updated_at > now() - ${windowMs} * interval '1 millisecond'
      )::int as shipped_in_window
    from process_instances
    where type = 'order'
      and (state in ${sql(inFlightStates)}
        or (state = 'shipped' and created_at > now() - ${windowMs + 60_000} * interval '1 millisecond'))`
  return { inFlight: row?.inFlight ?? 0, shippedInWindow: row?.shippedInWindow ?? 0 }
}
