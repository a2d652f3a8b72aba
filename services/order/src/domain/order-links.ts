// What an order is called by the rest of the system: the source its events carry and the hrefs of it and of what
// its saga heard of. Shared by the order use cases and the saga's process manager, which must not import each other.
import { cancellableOrderStatuses, type OrderLinks, type OrderStatus } from '@meridian/contracts'

export const serviceSource = 'order'

export const orderHref = (id: string) => `/api/v1/orders/${id}`

export const paymentHref = (paymentId: string) => `/api/v1/payments/${paymentId}`
export const shipmentHref = (shipmentId: string) => `/api/v1/shipments/${shipmentId}`

export const isCancellable = (status: OrderStatus): boolean => cancellableOrderStatuses.includes(status)

/** The statuses an order can be returned in (POST /orders/{id}/returns). */
export const returnableStatuses: readonly OrderStatus[] = ['shipped', 'delivered']
export const isReturnable = (status: OrderStatus): boolean => returnableStatuses.includes(status)

/** `self`, and `cancel` while the order can still be cancelled. */
export function orderLinks(id: string, status: OrderStatus): OrderLinks {
  const links: OrderLinks = { self: { href: orderHref(id), method: 'GET' } }
  if (isCancellable(status)) links.cancel = { href: `${orderHref(id)}/cancel`, method: 'POST' }
  return links
}
