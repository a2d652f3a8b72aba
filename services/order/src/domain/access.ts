// Who may act for a customer: the customer (a user whose id is the customer id) or an admin.
import { assertOwnerOrRole, holdsRole, type Principal } from '@meridian/service-kit'

export const adminRole = 'admin'

export const isCustomerOrAdmin = (principal: Principal, customerId: string): boolean =>
  (principal.kind === 'user' && principal.subject === customerId) || holdsRole(principal, [adminRole])

/** 403 unless the principal is the customer or an admin (401 without a principal). */
export function assertCustomerOrAdmin(principal: Principal | null, customerId: string): void {
  assertOwnerOrRole(principal, customerId, adminRole)
}
