// Whether a POST /payments request may pay the order it names, as a pure rule over what payment knows of the order:
// it exists (payment heard of it) and is the caller's (or the caller is an admin), it awaits a payment (its payment
// failed: nothing charged it, its refund was not requested, no other charge of it is on its way), and the amount is
// what is due. Another customer's order answers as an unknown one does: its existence is not told.
import { AppError, fromMinorUnits } from '@meridian/contracts'
import type { OrderToPay } from '../data/orders-repository.ts'
import type { Payer } from './payment-data.ts'

export interface PaymentRequestFacts {
  orderId: string
  payer: Payer
  /** the amount sent, in integer minor units */
  amountCents: number
  currency: string
  /** the order as payment recorded it; undefined when payment never heard of it */
  order: OrderToPay | undefined
  /** the saga asked for the order's refund: it was cancelled or failed */
  refundRequested: boolean
  /** a charge of the order under another provider key whose outcome is not known yet */
  otherChargePending: boolean
}

const refusedOrder = (orderId: string, message: string) =>
  AppError.conflict(message, [{ field: 'orderId', message, received: orderId }])

/** The order may be paid by this request: its record; else the refusal (404, 409 or 422) as an AppError. */
export function payability(
  facts: PaymentRequestFacts,
): { payable: true; order: OrderToPay } | { payable: false; refusal: AppError } {
  const { orderId, payer, order } = facts
  const refuse = (refusal: AppError) => ({ payable: false as const, refusal })
  const owned = order !== undefined && (payer.isAdmin || (payer.isUser && order.customerId === payer.subject))
  if (!order || !owned) return refuse(AppError.notFound(`Order ${orderId} not found`))
  if (facts.refundRequested)
    return refuse(refusedOrder(orderId, 'the order was cancelled or failed: it takes no payment'))
  if (order.paymentState === 'paid') return refuse(refusedOrder(orderId, 'the order is paid already'))
  if (order.paymentState === 'pending') {
    return refuse(
      refusedOrder(orderId, "the order's payment step is charging it: pay it only if its payment fails"),
    )
  }
  if (facts.otherChargePending) {
    return refuse(refusedOrder(orderId, 'another payment of the order is in progress: retry later'))
  }
  if (facts.amountCents !== order.amountCents) {
    return refuse(
      AppError.validation([
        {
          field: 'amount',
          message: `must be the amount due, ${fromMinorUnits(order.amountCents).toFixed(2)}`,
          received: String(fromMinorUnits(facts.amountCents)),
        },
      ]),
    )
  }
  if (facts.currency !== order.currency) {
    return refuse(
      AppError.validation([
        {
          field: 'currency',
          message: `must be the order's currency, ${order.currency}`,
          received: facts.currency,
        },
      ]),
    )
  }
  return { payable: true, order }
}
