// How a service reads a command whatever the version it came in, and what its answer carries back for the asker: the
// earlier versions' own fields (a return's `cause` and `returnId` on payment.refund_requested 1.1.0, the `returnId`
// of inventory.restock_requested 1.0) are read here, beside the catalogue that versions them, so payment and inventory
// know only a refund's key and a restock's id — never which process asked, or why.
import type { EventData } from './events.ts'

type RefundRequested = EventData<'payment.refund_requested'>

/** What a payment.refund_requested asks, whatever its version. */
export type RefundAsked =
  /** every succeeded payment of the order refunded in full (a compensation) */
  | { kind: 'order'; orderId: string; reason: string; attempt: number }
  /**
   * exactly `amount` refunded once under `refundKey`; either may be missing from a bad command (the refund is then
   * declined, nothing refunded)
   */
  | {
      kind: 'amount'
      orderId: string
      reason: string
      attempt: number
      amount: number | undefined
      refundKey: string | undefined
    }

/** The refund a payment.refund_requested asks for: 1.2.0's key, or 1.1.0's return (`return-<returnId>`). */
export function refundAsked(data: RefundRequested): RefundAsked {
  const { orderId, reason, attempt } = data
  const refundKey = data.refundKey ?? (data.returnId === undefined ? undefined : `return-${data.returnId}`)
  if (refundKey === undefined && data.cause !== 'return' && data.amount === undefined)
    return { kind: 'order', orderId, reason, attempt }
  return { kind: 'amount', orderId, reason, attempt, amount: data.amount, refundKey }
}

/**
 * What payment.refunded carries back of its request, unread by payment: the key, and the fields an order service of
 * a release before 1.2.0 finds its return's refund by (`cause`, `returnId`), as they came.
 */
export function refundAnswerFields(
  data: RefundRequested,
): Pick<EventData<'payment.refunded'>, 'refundKey' | 'cause' | 'returnId'> {
  return {
    ...(data.refundKey === undefined ? {} : { refundKey: data.refundKey }),
    ...(data.cause === undefined ? {} : { cause: data.cause }),
    ...(data.returnId === undefined ? {} : { returnId: data.returnId }),
  }
}

/** inventory.restock_requested 1.0 read as its v2: the return names the restock and its reason. */
export function restockAskedOfV1(
  data: EventData<'inventory.restock_requested'>,
): EventData<'inventory.restock_requested.v2'> {
  return {
    restockId: data.returnId,
    orderId: data.orderId,
    items: data.items,
    reason: `return ${data.returnId}`,
    attempt: data.attempt,
  }
}

/** inventory.restocked 1.0, the answer an order service of a release before this one waits for, from the v2 answer. */
export function restockedV1Of(answer: EventData<'inventory.restocked.v2'>): EventData<'inventory.restocked'> {
  return { returnId: answer.restockId, orderId: answer.orderId, items: answer.items }
}
