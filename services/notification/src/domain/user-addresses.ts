// Where a user's mail goes: auth's user events tell each user's address (user.registered at version 1,
// user.profile_changed at its version, user.removed for good), and order.placed's customerEmail seeds it for a
// customer whose user events have not arrived (version 0). The sender reads the address when it sends, so a changed
// address is used by mails still waiting.
import type { EventData } from '@meridian/contracts'
import type { TransactionSql } from '@meridian/db'
import type { UserAddressesRepository } from '../data/user-addresses-repository.ts'
import { isUuid } from './access.ts'

/** The version user.registered stands for: a new user is at version 1 (contracts' user.registered). */
const registeredVersion = 1
/** order.placed's customerEmail: below every user event's version. */
const orderVersion = 0

export function createUserAddressUseCases(addresses: UserAddressesRepository) {
  return {
    /** user.registered: the new user's address. */
    async recordRegistered(data: EventData<'user.registered'>, tx: TransactionSql): Promise<void> {
      await addresses.apply(data.userId.toLowerCase(), data.email, registeredVersion, tx)
    },

    /** user.profile_changed: the address at that version, unless a newer one is known. */
    async recordProfileChanged(data: EventData<'user.profile_changed'>, tx: TransactionSql): Promise<void> {
      await addresses.apply(data.userId.toLowerCase(), data.email, data.version, tx)
    },

    /** order.placed: the customer's address as the order was placed with it, when no user event told one yet. */
    async recordOrderEmail(data: EventData<'order.placed'>, tx: TransactionSql): Promise<void> {
      if (data.customerEmail === undefined || !isUuid(data.customerId)) return
      await addresses.apply(data.customerId.toLowerCase(), data.customerEmail, orderVersion, tx)
    },

    /** user.removed: the address is forgotten and the user's mails still waiting are given up. */
    async forgetUser(data: EventData<'user.removed'>, tx: TransactionSql): Promise<number> {
      return addresses.remove(data.userId.toLowerCase(), tx)
    },
  }
}

export type UserAddressUseCases = ReturnType<typeof createUserAddressUseCases>
