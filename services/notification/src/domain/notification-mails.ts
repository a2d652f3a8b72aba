// What each notification's mail is rendered from: the data of the @meridian/mail template named as its type, built
// from the event alone. Free text from other services is cleaned as the notification's own message cleans it
// (safeText); product names go in as the order recorded them (the template escapes them in HTML).
import type { EventData } from '@meridian/contracts'
import type { TemplateData } from '@meridian/mail'
import { safeText } from './notification-messages.ts'

/** A line's name: the order's product name, or its id when it recorded none. */
const lineName = (item: { productId: string; name?: string | undefined }) =>
  safeText(item.name ?? '', item.productId, 200)

export const orderPlacedMailData = (data: EventData<'order.placed'>): TemplateData<'order_placed'> => ({
  orderId: data.orderId,
  items: data.items.map((item) => ({ name: lineName(item), quantity: item.quantity, price: item.price })),
  total: data.total,
})

export const paymentFailedMailData = (data: EventData<'payment.failed'>): TemplateData<'payment_failed'> => ({
  orderId: data.orderId,
  reason: safeText(data.reason, 'no reason given'),
})

export function shipmentCreatedMailData(
  data: EventData<'shipment.created'>,
): TemplateData<'shipment_created'> {
  const carrier = data.carrier === undefined ? '' : safeText(data.carrier, '', 100)
  const trackingNumber = data.trackingNumber === undefined ? '' : safeText(data.trackingNumber, '', 100)
  return {
    orderId: data.orderId,
    ...(carrier ? { carrier } : {}),
    ...(trackingNumber ? { trackingNumber } : {}),
  }
}

export function shipmentDeliveredMailData(
  data: EventData<'shipment.delivered'>,
): TemplateData<'shipment_delivered'> {
  const day = /^\d{4}-\d{2}-\d{2}/.exec(data.deliveredAt)?.[0]
  return { orderId: data.orderId, ...(day ? { deliveredOn: day } : {}) }
}

export const returnRequestedMailData = (
  data: EventData<'return.requested'>,
): TemplateData<'return_requested'> => ({
  returnId: data.returnId,
  orderId: data.orderId,
  items: data.items.map((item) => ({ name: lineName(item), quantity: item.quantity })),
  refundAmount: data.refundAmount,
})

export const returnReceivedMailData = (
  data: EventData<'return.received'>,
): TemplateData<'return_received'> => ({
  returnId: data.returnId,
  orderId: data.orderId,
  units: Math.max(
    1,
    data.items.reduce((sum, item) => sum + item.quantity, 0),
  ),
})

export const returnCompletedMailData = (
  data: EventData<'return.completed'>,
): TemplateData<'return_completed'> => ({
  returnId: data.returnId,
  orderId: data.orderId,
  refundAmount: data.refundAmount,
})

export const returnRejectedMailData = (
  data: EventData<'return.rejected'>,
): TemplateData<'return_rejected'> => ({
  returnId: data.returnId,
  orderId: data.orderId,
  reason: safeText(data.reason, 'no reason given'),
})

export const exchangeRequestedMailData = (
  data: EventData<'exchange.requested'>,
): TemplateData<'exchange_requested'> => ({
  exchangeId: data.exchangeId,
  orderId: data.orderId,
  items: data.items.map((item) => ({
    name: lineName(item),
    quantity: item.quantity,
    replacementName: lineName({ productId: item.replacementProductId, name: item.replacementName }),
  })),
  charge: data.charge,
  refund: data.refund,
})

export const exchangeAwaitingGoodsMailData = (
  data: EventData<'exchange.awaiting_goods'>,
): TemplateData<'exchange_awaiting_goods'> => ({
  exchangeId: data.exchangeId,
  orderId: data.orderId,
  units: Math.max(
    1,
    data.items.reduce((sum, item) => sum + item.quantity, 0),
  ),
})

export const exchangeCompletedMailData = (
  data: EventData<'exchange.completed'>,
): TemplateData<'exchange_completed'> => ({
  exchangeId: data.exchangeId,
  orderId: data.orderId,
  charge: data.charge,
  refund: data.refund,
})

export const exchangeFailedMailData = (
  data: EventData<'exchange.failed'>,
): TemplateData<'exchange_failed'> => ({
  exchangeId: data.exchangeId,
  orderId: data.orderId,
  reason: safeText(data.reason, 'no reason given'),
})

export const welcomeMailData = (data: EventData<'user.registered'>): TemplateData<'welcome'> => ({
  name: safeText(data.name, '', 100),
})
