// What notifications say, as pure rules: each event's title and message (a return's and an exchange's steps among
// them), and free text from other services cleaned of card numbers, tokens, secrets, e-mail addresses and control
// characters.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  exchangeAwaitingGoods,
  exchangeCompleted,
  exchangeFailed,
  exchangeRequested,
  orderPlaced,
  paymentFailed,
  returnCompleted,
  returnReceived,
  returnRejected,
  returnRequested,
  safeText,
  shipmentCreated,
  shipmentDelivered,
  welcome,
} from '../src/domain/notification-messages.ts'

const orderId = randomUUID()

describe('safeText', () => {
  it('when the text is plain, then it is kept, on one line, trimmed', () => {
    expect(safeText('  insufficient\nfunds\t ', 'x')).toBe('insufficient funds')
  })

  it('when it carries a card number, a provider token, a bearer credential, a JWT or an e-mail address, then each is redacted', () => {
    expect(safeText('card 4111-1111-1111-1111 declined', 'x')).toBe('card [redacted] declined')
    expect(safeText('card 4111111111111111 declined', 'x')).toBe('card [redacted] declined')
    expect(safeText('pm_card_visa and sk_live_abc123 refused', 'x')).toBe('[redacted] and [redacted] refused')
    expect(safeText('Bearer abc.def.ghi', 'x')).toBe('[redacted]')
    expect(safeText('token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig', 'x')).toBe('token [redacted]')
    expect(safeText('ask jane.doe+1@example.co.uk', 'x')).toBe('ask [redacted]')
    expect(safeText('key a1b2c3d4e5f6g7h8i9j0k1l2m3', 'x')).toBe('key [redacted]')
  })

  it('when short numbers or words remain, then they stay (an order count, a year, a postcode)', () => {
    expect(safeText('limit of 500 exceeded in 2026 for 12345', 'x')).toBe(
      'limit of 500 exceeded in 2026 for 12345',
    )
  })

  it('when nothing is left, then the fallback; when too long, then cut with an ellipsis', () => {
    expect(safeText(' \u0000\u0007 ', 'no reason given')).toBe('no reason given')
    const cut = safeText('a'.repeat(500), 'x', 50)
    expect(cut).toHaveLength(50)
    expect(cut.endsWith('…')).toBe(true)
  })
})

describe('the messages', () => {
  it('when an order is placed, then its units and total; one unit reads "1 item"', () => {
    const items = [{ productId: randomUUID(), quantity: 1, price: 5 }]
    expect(orderPlaced({ orderId, customerId: randomUUID(), total: 5, items })).toEqual({
      type: 'order_placed',
      title: 'Order placed',
      message: `Your order ${orderId} was placed: 1 item, total 5.00.`,
    })
  })

  it('when order.placed carries a payment token or an e-mail, then the message has neither', () => {
    const { message } = orderPlaced({
      orderId,
      customerId: randomUUID(),
      total: 10.5,
      items: [{ productId: randomUUID(), quantity: 4, price: 2.625 }],
      customerEmail: 'buyer@example.com',
      payment: { token: 'tok_visa_secret' },
    })
    expect(message).toBe(`Your order ${orderId} was placed: 4 items, total 10.50.`)
  })

  it('when the reason is already a sentence ("Your card was declined." from the provider), then the message ends with one full stop, not two', () => {
    expect(paymentFailed({ orderId, reason: 'Your card was declined.' }).message).toBe(
      `The payment for your order ${orderId} failed: Your card was declined.`,
    )
    expect(paymentFailed({ orderId, reason: 'Is the card valid?' }).message).toBe(
      `The payment for your order ${orderId} failed: Is the card valid?`,
    )
    expect(paymentFailed({ orderId, reason: 'card declined' }).message).toBe(
      `The payment for your order ${orderId} failed: card declined.`,
    )
  })

  it('when a payment fails without a reason, a shipment has no carrier, a delivery time is odd, a name is empty, then the messages still read well', () => {
    expect(paymentFailed({ orderId, reason: '' }).message).toBe(
      `The payment for your order ${orderId} failed: no reason given.`,
    )
    expect(shipmentCreated({ orderId, shipmentId: randomUUID() }).message).toBe(
      `Your order ${orderId} has shipped.`,
    )
    expect(shipmentDelivered({ orderId, shipmentId: randomUUID(), deliveredAt: 'soon' }).message).toBe(
      `Your order ${orderId} was delivered.`,
    )
    expect(
      welcome({ userId: randomUUID(), email: 'new@example.com', name: '  ', role: 'user' }).message,
    ).toBe('Welcome to Meridian. Your account is ready.')
  })
})

describe("a return's messages", () => {
  const returnId = randomUUID()
  const customerId = randomUUID()

  it('when a return is requested, then its units and the refund it will make once received', () => {
    const items = [
      { productId: randomUUID(), quantity: 2, price: 19.99, name: 'Mug' },
      { productId: randomUUID(), quantity: 1, price: 20 },
    ]
    expect(
      returnRequested({ returnId, orderId, customerId, items, refundAmount: 59.98, reason: 'too small' }),
    ).toEqual({
      type: 'return_requested',
      title: 'Return requested',
      message: `Your return ${returnId} for order ${orderId} was requested: 3 items, refund 59.98 once they are received.`,
    })
  })

  it('when the goods are received, then their units (one unit reads "1 item") and that the refund follows', () => {
    expect(
      returnReceived({ returnId, orderId, customerId, items: [{ productId: randomUUID(), quantity: 1 }] }),
    ).toEqual({
      type: 'return_received',
      title: 'Return received',
      message: `The 1 item of your return ${returnId} for order ${orderId} arrived; your refund follows.`,
    })
  })

  it('when the return is completed, then the amount refunded, with two decimals', () => {
    expect(
      returnCompleted({ returnId, orderId, customerId, refundAmount: 19.9, paymentId: randomUUID() }),
    ).toEqual({
      type: 'return_completed',
      title: 'Return refunded',
      message: `Your return ${returnId} for order ${orderId} is complete: 19.90 refunded.`,
    })
  })

  it('when the return is rejected, then the reason, cleaned (no e-mail address, one line), as one sentence; none given, said so', () => {
    expect(
      returnRejected({
        returnId,
        orderId,
        customerId,
        reason: 'worn, write to returns@example.com\nfor help',
      }),
    ).toEqual({
      type: 'return_rejected',
      title: 'Return rejected',
      message: `Your return ${returnId} for order ${orderId} was rejected: worn, write to [redacted] for help.`,
    })
    expect(returnRejected({ returnId, orderId, customerId, reason: 'Opened.' }).message).toBe(
      `Your return ${returnId} for order ${orderId} was rejected: Opened.`,
    )
    expect(returnRejected({ returnId, orderId, customerId, reason: ' ' }).message).toBe(
      `Your return ${returnId} for order ${orderId} was rejected: no reason given.`,
    )
  })
})

describe("an exchange's messages", () => {
  const exchangeId = randomUUID()
  const customerId = randomUUID()
  const items = [
    {
      productId: randomUUID(),
      quantity: 2,
      price: 12.5,
      name: 'Mug',
      replacementProductId: randomUUID(),
      replacementPrice: 15,
      replacementName: 'Large mug',
    },
    {
      productId: randomUUID(),
      quantity: 1,
      price: 20,
      replacementProductId: randomUUID(),
      replacementPrice: 20,
    },
  ]
  const asked = `Your exchange ${exchangeId} for order ${orderId} was requested: 3 items;`

  it('when an exchange is requested, then its units and the price difference: charged, refunded once received, or none', () => {
    expect(exchangeRequested({ exchangeId, orderId, customerId, items, charge: 5, refund: 0 })).toEqual({
      type: 'exchange_requested',
      title: 'Exchange requested',
      message: `${asked} a price difference of 5.00 will be charged.`,
    })
    expect(
      exchangeRequested({ exchangeId, orderId, customerId, items, charge: 0, refund: 7.5 }).message,
    ).toBe(`${asked} a price difference of 7.50 will be refunded once they are received.`)
    expect(exchangeRequested({ exchangeId, orderId, customerId, items, charge: 0, refund: 0 }).message).toBe(
      `${asked} there is no price difference.`,
    )
  })

  it('when the replacements are held, then the units to send back (one unit reads "1 item")', () => {
    expect(
      exchangeAwaitingGoods({
        exchangeId,
        orderId,
        customerId,
        items: [{ productId: randomUUID(), quantity: 1 }],
      }),
    ).toEqual({
      type: 'exchange_awaiting_goods',
      title: 'Exchange awaiting your items',
      message: `The replacements of your exchange ${exchangeId} for order ${orderId} are held: send the 1 item back.`,
    })
  })

  it('when the exchange is completed, then the replacements are on their way, with the fall refunded, the rise charged, or nothing', () => {
    const complete = `Your exchange ${exchangeId} for order ${orderId} is complete: the replacements are on their way`
    expect(exchangeCompleted({ exchangeId, orderId, customerId, charge: 0, refund: 7.5 })).toEqual({
      type: 'exchange_completed',
      title: 'Exchange completed',
      message: `${complete}; 7.50 refunded.`,
    })
    expect(
      exchangeCompleted({ exchangeId, orderId, customerId, charge: 5, refund: 0, shipmentId: randomUUID() })
        .message,
    ).toBe(`${complete}; a price difference of 5.00 charged.`)
    expect(exchangeCompleted({ exchangeId, orderId, customerId, charge: 0, refund: 0 }).message).toBe(
      `${complete}.`,
    )
  })

  it('when the exchange fails, then the reason, cleaned, as one sentence (none given, said so), and that nothing is charged for it; never the failed step', () => {
    const failed = (reason: string) =>
      exchangeFailed({ exchangeId, orderId, customerId, reason, failedStep: 'reserve_replacements' })
    const undone = 'Nothing is charged for it: whatever was charged is refunded.'
    expect(failed('card 4111 1111 1111 1111 declined\nby the bank')).toEqual({
      type: 'exchange_failed',
      title: 'Exchange failed',
      message: `Your exchange ${exchangeId} for order ${orderId} could not be completed: card [redacted] declined by the bank. ${undone}`,
    })
    expect(failed('Out of stock.').message).toBe(
      `Your exchange ${exchangeId} for order ${orderId} could not be completed: Out of stock. ${undone}`,
    )
    expect(failed('').message).toBe(
      `Your exchange ${exchangeId} for order ${orderId} could not be completed: no reason given. ${undone}`,
    )
    // the failed step is the order service's word, not the customer's
    expect(failed('x').message).not.toContain('reserve_replacements')
  })
})
