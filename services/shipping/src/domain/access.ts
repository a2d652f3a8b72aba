// Who may see a shipment: its customer (a user whose id is the shipment's customer id) or an admin; and the name an
// unnamed carrier's key goes by in the audit trail.
import { createHash } from 'node:crypto'
import { holdsRole, type Principal } from '@meridian/service-kit'

export const adminRole = 'admin'

export const isAdmin = (principal: Principal): boolean => holdsRole(principal, [adminRole])

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether an id can name a row of this service (its ids are uuids; anything else names nothing here). */
export const isUuid = (id: string): boolean => uuidPattern.test(id)

export const isCustomerOrAdmin = (principal: Principal, customerId: string | null): boolean =>
  isAdmin(principal) ||
  (principal.kind === 'user' && customerId !== null && principal.subject.toLowerCase() === customerId)

/**
 * Whose shipments a principal's lists show: every one for an admin (undefined: no filter), the user's own for a user;
 * null for anyone else (a client, a subject that is not a user id), who owns none.
 */
export function ownerFilterOf(principal: Principal): string | undefined | null {
  if (isAdmin(principal)) return undefined
  if (principal.kind === 'user' && isUuid(principal.subject)) return principal.subject.toLowerCase()
  return null
}

/**
 * The audit trail's name of a carrier whose key is unnamed (SHIPPING_CARRIER_KEYS): `carrier:key-` and the first 8
 * hex digits of the key's SHA-256, which tell the keys apart without giving any of them away.
 */
export const carrierActorOf = (key: string): string =>
  `carrier:key-${createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 8)}`
