// Whose notifications a principal may read: a user their own, an admin anyone's.
import { AppError } from '@meridian/contracts'
import { holdsRole, type Principal } from '@meridian/service-kit'

export const adminRole = 'admin'

export const isAdmin = (principal: Principal): boolean => holdsRole(principal, [adminRole])

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether an id can name a row of this service (its ids are uuids; anything else names nothing here). */
export const isUuid = (id: string): boolean => uuidPattern.test(id)

/** The user id of a principal that can own notifications (a user, or an API key's owner); null for anyone else. */
export function recipientOf(principal: Principal): string | null {
  if (principal.kind === 'user' && isUuid(principal.subject)) return principal.subject.toLowerCase()
  return null
}

/**
 * Whose notifications a list shows: the caller's own without `userId`; with it, that user's for an admin or for the
 * user themself, 403 for anyone else (the query names the user, so refusing tells nothing new). null: a caller who
 * owns none (a client) and asked for nobody's, who sees an empty list.
 */
export function listOwnerOf(principal: Principal, userId: string | undefined): string | null {
  const own = recipientOf(principal)
  if (userId === undefined) return own
  const asked = userId.toLowerCase()
  if (asked === own || isAdmin(principal)) return asked
  throw AppError.forbidden()
}

/** Whether the principal may read a notification of `userId` (null: pending, an admin's only). */
export const mayRead = (principal: Principal, userId: string | null): boolean =>
  isAdmin(principal) || (userId !== null && recipientOf(principal) === userId)
