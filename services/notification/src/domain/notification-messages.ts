// What each notification says: its type, title and message for the event that makes it. Pure: the text is built
// from the event's data alone, and free text from other services is cleaned so that a notification never carries
// card numbers, tokens, e-mail addresses or control characters, whatever a producer put in it.
import type { EventData, NotificationType } from '@meridian/contracts'

export interface NotificationContent {
  type: NotificationType
  title: string
  message: string
}

/** Longest piece of another service's free text (a reason, a name) that goes into a message. */
const maximumFreeText = 200

// C0 and C1 control characters (line breaks and NUL among them), and the Unicode line and paragraph separators
const controlCharacters = /[\p{Cc}\u2028\u2029]+/gu
// 12 to 19 digits, single spaces or dashes between them: a card number (PAN), an account number
const longNumbers = /\d(?:[ -]?\d){11,18}/g
// Each pattern below runs in linear time (the repository's linear-patterns test proves it): a match may only start
// where the text before it ends a word (group 1, put back), so a long run is scanned once, not once from each of its
// characters.
const emailAddresses = /(^|[\s@<>()[\],;:"])[^\s@<>()[\],;:"]+@[^\s@<>()[\],;:"]+\.[^\s@<>()[\],;:"]+/g
// provider identifiers and secrets (tok_..., pm_..., sk_live_..., card_...), bearer credentials, JWT-like strings
const tokens =
  /(^|[^A-Za-z0-9_-])(?:(?:tok|pm|pi|ch|sk|pk|rk|card|src|seti|cus)_[A-Za-z0-9_]+|Bearer\s+\S+|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+)/g
// any other long run of letters and digits with both in it (an API key, a session id): the run is found by a pattern,
// the "both in it" checked in code (lookaheads over the run would read it again from each start)
const longRuns = /[A-Za-z0-9_-]{24,}/g
const secretLike = (run: string) => /\d/.test(run) && /[A-Za-z]/.test(run)

/**
 * Another service's free text as a message may show it: one line, no card number, token, secret or e-mail address
 * (each replaced by [redacted]), at most `maximum` characters; `fallback` when nothing is left.
 */
export function safeText(text: string, fallback: string, maximum = maximumFreeText): string {
  const cleaned = text
    .replace(controlCharacters, ' ')
    .replace(tokens, '$1[redacted]')
    .replace(emailAddresses, '$1[redacted]')
    .replace(longNumbers, '[redacted]')
    .replace(longRuns, (run) => (secretLike(run) ? '[redacted]' : run))
    .replace(/\s+/g, ' ')
    .trim()
  if (cleaned === '') return fallback
  return cleaned.length > maximum ? `${cleaned.slice(0, maximum - 1).trimEnd()}…` : cleaned
}

/** An amount in major units as the message writes it: two decimals (19.9 -> 19.90). */
export const formatAmount = (amount: number): string => amount.toFixed(2)

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`

/**
 * order.placed: the order's customer hears it was placed, with its item count (units) and total. Placed, not
 * confirmed: its payment comes after (payment.failed tells them when it fails, shipment.created when it has gone out).
 */
export function orderPlaced(data: EventData<'order.placed'>): NotificationContent {
  const units = data.items.reduce((sum, item) => sum + item.quantity, 0)
  return {
    type: 'order_placed',
    title: 'Order placed',
    message: `Your order ${data.orderId} was placed: ${plural(units, 'item', 'items')}, total ${formatAmount(data.total)}.`,
  }
}

/** payment.failed: the order's customer hears why (cleaned), so they can pay again. */
export function paymentFailed(data: EventData<'payment.failed'>): NotificationContent {
  return {
    type: 'payment_failed',
    title: 'Payment failed',
    message: `The payment for your order ${data.orderId} failed: ${sentence(safeText(data.reason, 'no reason given'))}`,
  }
}

/**
 * Text ended as one sentence: a reason that already ends with a full stop, question or exclamation mark (the
 * provider's "Your card was declined.") keeps it, any other gets a full stop — never "declined..".
 */
export const sentence = (text: string): string => (/[.!?…]$/.test(text) ? text : `${text}.`)

/** shipment.created: the order is on its way, with the carrier and tracking number when the event has them. */
export function shipmentCreated(data: EventData<'shipment.created'>): NotificationContent {
  const carrier = data.carrier === undefined ? '' : safeText(data.carrier, '', 100)
  const tracking = data.trackingNumber === undefined ? '' : safeText(data.trackingNumber, '', 100)
  return {
    type: 'shipment_created',
    title: 'Order shipped',
    message: `Your order ${data.orderId} has shipped${carrier ? ` with ${carrier}` : ''}${tracking ? ` (tracking number ${tracking})` : ''}.`,
  }
}

/** shipment.delivered: the order arrived (the day, as the carrier reported it, in UTC). */
export function shipmentDelivered(data: EventData<'shipment.delivered'>): NotificationContent {
  const day = /^\d{4}-\d{2}-\d{2}/.exec(data.deliveredAt)?.[0]
  return {
    type: 'shipment_delivered',
    title: 'Order delivered',
    message: `Your order ${data.orderId} was delivered${day ? ` on ${day}` : ''}.`,
  }
}

const unitsOf = (items: readonly { quantity: number }[]) =>
  items.reduce((sum, item) => sum + item.quantity, 0)

/** return.requested: the customer's return was taken, with its units and the refund it will make once received. */
export function returnRequested(data: EventData<'return.requested'>): NotificationContent {
  return {
    type: 'return_requested',
    title: 'Return requested',
    message: `Your return ${data.returnId} for order ${data.orderId} was requested: ${plural(unitsOf(data.items), 'item', 'items')}, refund ${formatAmount(data.refundAmount)} once they are received.`,
  }
}

/** return.received: the returned goods arrived; the stock goes back and the refund follows. */
export function returnReceived(data: EventData<'return.received'>): NotificationContent {
  return {
    type: 'return_received',
    title: 'Return received',
    message: `The ${plural(unitsOf(data.items), 'item', 'items')} of your return ${data.returnId} for order ${data.orderId} arrived; your refund follows.`,
  }
}

/** return.completed: the returned lines are refunded, with the amount. */
export function returnCompleted(data: EventData<'return.completed'>): NotificationContent {
  return {
    type: 'return_completed',
    title: 'Return refunded',
    message: `Your return ${data.returnId} for order ${data.orderId} is complete: ${formatAmount(data.refundAmount)} refunded.`,
  }
}

/** return.rejected: the return was refused before its goods were received, with the reason (cleaned). */
export function returnRejected(data: EventData<'return.rejected'>): NotificationContent {
  return {
    type: 'return_rejected',
    title: 'Return rejected',
    message: `Your return ${data.returnId} for order ${data.orderId} was rejected: ${sentence(safeText(data.reason, 'no reason given'))}`,
  }
}

/**
 * The exchange's price difference, as the event's charge (a rise) and refund (a fall) tell it: one of them is 0 (the
 * exchange's contract); should a producer ever send both, the charge is the one told, as the one taken first.
 */
export function priceDifferenceOf(data: {
  charge: number
  refund: number
}): { kind: 'charge' | 'refund'; amount: number } | undefined {
  if (data.charge > 0) return { kind: 'charge', amount: data.charge }
  if (data.refund > 0) return { kind: 'refund', amount: data.refund }
  return undefined
}

/**
 * exchange.requested: the customer's exchange was taken, with its units and the price difference: a rise is charged
 * before the replacements are held, a fall refunded once the goods are received.
 */
export function exchangeRequested(data: EventData<'exchange.requested'>): NotificationContent {
  const difference = priceDifferenceOf(data)
  const said =
    difference === undefined
      ? 'there is no price difference'
      : difference.kind === 'charge'
        ? `a price difference of ${formatAmount(difference.amount)} will be charged`
        : `a price difference of ${formatAmount(difference.amount)} will be refunded once they are received`
  return {
    type: 'exchange_requested',
    title: 'Exchange requested',
    message: `Your exchange ${data.exchangeId} for order ${data.orderId} was requested: ${plural(unitsOf(data.items), 'item', 'items')}; ${said}.`,
  }
}

/** exchange.awaiting_goods: the replacements are held (a rise charged); the customer may send the goods back now. */
export function exchangeAwaitingGoods(data: EventData<'exchange.awaiting_goods'>): NotificationContent {
  return {
    type: 'exchange_awaiting_goods',
    title: 'Exchange awaiting your items',
    message: `The replacements of your exchange ${data.exchangeId} for order ${data.orderId} are held: send the ${plural(unitsOf(data.items), 'item', 'items')} back.`,
  }
}

/** exchange.completed: the goods came back and the replacements shipped, with the fall refunded or the rise charged. */
export function exchangeCompleted(data: EventData<'exchange.completed'>): NotificationContent {
  const difference = priceDifferenceOf(data)
  const settled =
    difference === undefined
      ? ''
      : difference.kind === 'refund'
        ? `; ${formatAmount(difference.amount)} refunded`
        : `; a price difference of ${formatAmount(difference.amount)} charged`
  return {
    type: 'exchange_completed',
    title: 'Exchange completed',
    message: `Your exchange ${data.exchangeId} for order ${data.orderId} is complete: the replacements are on their way${settled}.`,
  }
}

/**
 * exchange.failed: the reason (cleaned; the failed step is the order service's word, not the customer's), and that
 * what was done is undone: a rise already charged is refunded, so nothing is charged for the exchange.
 */
export function exchangeFailed(data: EventData<'exchange.failed'>): NotificationContent {
  return {
    type: 'exchange_failed',
    title: 'Exchange failed',
    message: `Your exchange ${data.exchangeId} for order ${data.orderId} could not be completed: ${sentence(safeText(data.reason, 'no reason given'))} Nothing is charged for it: whatever was charged is refunded.`,
  }
}

/** user.registered: the new user is greeted by name (never their e-mail address). */
export function welcome(data: EventData<'user.registered'>): NotificationContent {
  const name = safeText(data.name, '', 100)
  return {
    type: 'welcome',
    title: 'Welcome to Meridian',
    message: `${name ? `Hello ${name}, welcome` : 'Welcome'} to Meridian. Your account is ready.`,
  }
}
