// The events a return's commands go out as: its news (requested, received, completed, rejected) and its steps'
// requests (the restock under the return's id, the refund under its key `return-<id>`), from the return's row and
// the instance.
import { type EventType, fromMinorUnits } from '@meridian/contracts'
import { type CatalogueEvent, createEvent } from '@meridian/events'
import type { CommandContext } from '@meridian/process'
import type { ReturnRecord } from '../data/returns-repository.ts'
import { serviceSource } from './order-links.ts'
import type { ReturnCommand, ReturnInstance } from './return-machine.ts'

/** The key a return's refund is made under, once (payment's provider key: `refund-return-<id>`). */
export const returnRefundKey = (returnId: string) => `return-${returnId}`

/** The event a return's command goes out as, from its row (the owner) and the instance the decision leads to. */
export function returnCommandEvent(
  command: ReturnCommand,
  { instance, owner }: CommandContext<ReturnInstance, ReturnRecord>,
): CatalogueEvent<EventType> {
  const event = <Type extends EventType>(type: Type, data: CatalogueEvent<Type>['data']) =>
    createEvent(type, data, { source: serviceSource })
  const about = { returnId: owner.id, orderId: owner.orderId }
  const items = owner.items.map(({ productId, quantity }) => ({ productId, quantity }))
  const refundAmount = fromMinorUnits(owner.refundCents)
  switch (command.type) {
    case 'return.requested':
      return event('return.requested', {
        ...about,
        customerId: owner.customerId,
        items: owner.items.map((item) => ({
          productId: item.productId,
          quantity: item.quantity,
          price: fromMinorUnits(item.priceCents),
          name: item.name,
        })),
        refundAmount,
        reason: owner.reason,
      })
    case 'return.received':
      return event('return.received', { ...about, customerId: owner.customerId, items })
    case 'return.completed':
      return event('return.completed', {
        ...about,
        customerId: owner.customerId,
        refundAmount,
        ...(instance.paymentId ? { paymentId: instance.paymentId } : {}),
      })
    case 'return.rejected':
      return event('return.rejected', {
        ...about,
        customerId: owner.customerId,
        reason: instance.rejectionReason ?? 'rejected',
      })
    case 'inventory.restock_requested.v2':
      return event('inventory.restock_requested.v2', {
        restockId: owner.id,
        orderId: owner.orderId,
        items,
        reason: `return ${owner.id}`,
        attempt: command.attempt,
      })
    case 'payment.refund_requested':
      // cause and returnId are 1.1.0's way of naming the key, for a payment service of a release before 0.2
      return event('payment.refund_requested', {
        orderId: owner.orderId,
        reason: `return ${owner.id}: ${owner.reason}`,
        attempt: command.attempt,
        amount: refundAmount,
        refundKey: returnRefundKey(owner.id),
        cause: 'return',
        returnId: owner.id,
      })
  }
}
