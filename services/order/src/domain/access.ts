// Who may act for a customer: the customer (a user whose id is the customer id) or an admin; and what a customer whose
// address is not verified may order (UNVERIFIED_CUSTOMER_ORDER_LIMIT, issue 44, point 5).
import { AppError, fromMinorUnits } from '@meridian/contracts'
import { assertOwnerOrRole, holdsRole, type Principal } from '@meridian/service-kit'

export const adminRole = 'admin'

export const isCustomerOrAdmin = (principal: Principal, customerId: string): boolean =>
  (principal.kind === 'user' && principal.subject === customerId) || holdsRole(principal, [adminRole])

/** 403 unless the principal is the customer or an admin (401 without a principal). */
export function assertCustomerOrAdmin(principal: Principal | null, customerId: string): void {
  assertOwnerOrRole(principal, customerId, adminRole)
}

/** The customer placing for themself with a credential that says their address is not proved (an admin never is). */
const isUnverifiedCustomer = (principal: Principal, customerId: string): boolean =>
  principal.kind === 'user' &&
  principal.subject === customerId &&
  principal.emailVerified === false &&
  !holdsRole(principal, [adminRole])

/**
 * 403 when the customer's address is not verified and the limit (cents; undefined: none) refuses the order: a limit
 * of 0 every order (checked before pricing, `totalCents` undefined), another a total above it (checked once priced).
 */
export function assertUnverifiedMayOrder(
  principal: Principal,
  customerId: string,
  limitCents: number | undefined,
  totalCents?: number,
): void {
  if (limitCents === undefined || !isUnverifiedCustomer(principal, customerId)) return
  if (limitCents === 0) {
    throw AppError.forbidden(
      'Confirm your e-mail address before placing an order (use the link mailed to it)',
    )
  }
  if (totalCents !== undefined && totalCents > limitCents) {
    throw AppError.forbidden(
      `Until your e-mail address is confirmed, an order may total at most ${fromMinorUnits(limitCents)} ` +
        '(use the link mailed to it)',
    )
  }
}
