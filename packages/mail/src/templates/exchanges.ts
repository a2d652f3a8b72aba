// Mails about an exchange: requested (its lines, each with its replacement, and the price difference to come), its
// replacements held (the goods may be sent back), completed (the replacements shipped), failed (the reason).
import { Type } from 'typebox'
import { html } from '../html.ts'
import { formatMoney } from '../money.ts'
import { defineTemplate, page, textOf } from './template.ts'

const Id = Type.String({ minLength: 1, maxLength: 255 })
const Amount = Type.Number({ minimum: 0 })
const ExchangeIds = { exchangeId: Id, orderId: Id }
/** The price rise charged and the price fall refunded: one of them is 0 (the exchange's contract). */
const PriceDifference = { charge: Amount, refund: Amount }

const Name = Type.String({ minLength: 1, maxLength: 500 })
const ExchangeLine = Type.Object({
  name: Name,
  quantity: Type.Integer({ minimum: 1 }),
  replacementName: Name,
})

const units = (count: number) => `${count} ${count === 1 ? 'item' : 'items'}`

export const exchangeRequestedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({
    ...ExchangeIds,
    items: Type.Array(ExchangeLine, { minItems: 1, maxItems: 1000 }),
    ...PriceDifference,
  }),
  render({ exchangeId, orderId, items, charge, refund }) {
    const subject = `Exchange ${exchangeId} requested`
    // a rise is charged before the replacements are held, a fall refunded once the goods are back
    const difference =
      charge > 0
        ? `A price difference of ${formatMoney(charge)} will be charged.`
        : refund > 0
          ? `A price difference of ${formatMoney(refund)} will be refunded once your items are received.`
          : 'There is no price difference.'
    const said = `We have your exchange ${exchangeId} for order ${orderId}. ${difference}`
    const line = (item: (typeof items)[number]) =>
      `${item.quantity} × ${item.name} for ${item.replacementName}`
    return {
      subject,
      text: textOf(said, items.map((item) => `- ${line(item)}`).join('\n')),
      html: page(subject, html`<p>${said}</p><ul>${items.map((item) => html`<li>${line(item)}</li>`)}</ul>`),
    }
  },
})

export const exchangeAwaitingGoodsMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({ ...ExchangeIds, units: Type.Integer({ minimum: 1 }) }),
  render({ exchangeId, orderId, units: count }) {
    const subject = `Exchange ${exchangeId}: send your items back`
    const said = `The replacements of your exchange ${exchangeId} for order ${orderId} are held for you. Please send the ${units(count)} back; the replacements ship once they arrive.`
    return { subject, text: textOf(said), html: page(subject, html`<p>${said}</p>`) }
  },
})

export const exchangeCompletedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({ ...ExchangeIds, ...PriceDifference }),
  render({ exchangeId, orderId, charge, refund }) {
    const subject = `Exchange ${exchangeId} completed`
    const settled =
      refund > 0
        ? ` ${formatMoney(refund)} was refunded.`
        : charge > 0
          ? ` A price difference of ${formatMoney(charge)} was charged.`
          : ''
    const said = `Your exchange ${exchangeId} for order ${orderId} is complete: the replacements are on their way.${settled}`
    return { subject, text: textOf(said), html: page(subject, html`<p>${said}</p>`) }
  },
})

export const exchangeFailedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({ ...ExchangeIds, reason: Type.String({ maxLength: 1000 }) }),
  render({ exchangeId, orderId, reason }) {
    const subject = `Exchange ${exchangeId} failed`
    const said = `Your exchange ${exchangeId} for order ${orderId} could not be completed: ${reason}`
    const undone = 'Nothing is charged for it: whatever was charged is refunded.'
    return { subject, text: textOf(said, undone), html: page(subject, html`<p>${said}</p><p>${undone}</p>`) }
  },
})
