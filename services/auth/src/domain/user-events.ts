// The events auth publishes about users, each appended to the outbox in the transaction of the write it tells of.
import type { Queryable } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { UserRecord } from '../data/users-repository.ts'

/** The name auth signs its events with (the envelope's source). */
export const serviceSource = 'auth'

/** user.registered: a new user (never with the password), its status saying whether it is invited. */
export async function recordRegistration(tx: Queryable, user: UserRecord): Promise<void> {
  const registered = createEvent(
    'user.registered',
    { userId: user.id, email: user.email, name: user.name, role: user.role, status: user.status },
    { source: serviceSource },
  )
  await appendToOutbox(tx, registered, { aggregateId: user.id })
}

/** user.profile_changed: the user's whole state after a change of name, email, role or status, and its version. */
export async function recordProfileChange(tx: Queryable, user: UserRecord): Promise<void> {
  const changed = createEvent(
    'user.profile_changed',
    {
      userId: user.id,
      email: user.email,
      name: user.name,
      role: user.role,
      status: user.status,
      version: user.version,
    },
    { source: serviceSource },
  )
  await appendToOutbox(tx, changed, { aggregateId: user.id })
}

/** user.removed: the user is gone; nothing of theirs follows. */
export async function recordRemoval(tx: Queryable, userId: string): Promise<void> {
  await appendToOutbox(tx, createEvent('user.removed', { userId }, { source: serviceSource }), {
    aggregateId: userId,
  })
}
