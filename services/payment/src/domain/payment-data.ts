// What payment's use cases share: who pays, a payment as clients read it, the data of the events payment appends
// about an order (payment.processed carries the order's content), and the order as payment records it. Pure: no I/O.
import { type EventData, fromMinorUnits, type Payment, toMinorUnits } from '@meridian/contracts'
import type { ChargedOrderData } from '../data/charge-attempts-repository.ts'
import type { NewOrderToPay } from '../data/orders-repository.ts'
import type { PaymentRecord } from '../data/payments-repository.ts'

/** The name payment signs its events with (the envelope's source). */
export const serviceSource = 'payment'

/** The only currency the provider charges in for now. */
export const defaultCurrency = 'usd'

/** Reason of payment.failed when the order's refund was requested before it was charged. */
export const orderCancelled = 'the order was cancelled'

/** Provider answers of a charge that are its definitive failure: declined, a refused payment method, rate-limited. */
export const definitiveChargeFailures: readonly number[] = [402, 422, 429]

export interface Payer {
  /** the principal's subject: scopes the caller's Idempotency-Keys, and owns the payment */
  subject: string
  isAdmin: boolean
  /** a user (not an OAuth client): only a user is an order's customer */
  isUser: boolean
}

export function presentPayment(record: PaymentRecord): Payment {
  return {
    paymentId: record.id,
    orderId: record.orderId,
    status: record.status,
    amount: fromMinorUnits(record.amountCents),
    brand: record.brand,
    last4: record.last4,
    ...(record.refundedCents > 0 ? { refundedAmount: fromMinorUnits(record.refundedCents) } : {}),
    ...(record.disputedAt ? { disputedAt: record.disputedAt.toISOString() } : {}),
  }
}

/** The order.placed content that payment.processed carries (no payment token, no saga attempt). */
export function chargedOrderData(data: EventData<'order.placed'>): ChargedOrderData {
  const { orderId, customerId, total, items, customerEmail, status, shippingAddress } = data
  return {
    orderId,
    customerId,
    total,
    items,
    ...(customerEmail === undefined ? {} : { customerEmail }),
    ...(status === undefined ? {} : { status }),
    ...(shippingAddress === undefined ? {} : { shippingAddress }),
  }
}

/** payment.processed data: the order's content plus the payment that charged it. */
export const processedData = (
  order: ChargedOrderData,
  paymentId: string,
): EventData<'payment.processed'> => ({
  ...order,
  paymentId,
})

/**
 * The order as payment records it from its content: its customer and what is due (a total that is not an amount of
 * cents is recorded as 0 due, which no payment matches).
 */
export const orderToPay = (order: ChargedOrderData): NewOrderToPay => ({
  orderId: order.orderId,
  customerId: order.customerId,
  amountCents: toMinorUnits(order.total) ?? 0,
  currency: defaultCurrency,
  orderData: order,
})
