// Mails about an order: placed (its lines, quantities, prices and total), paid, shipped, delivered, payment failed.
import { Type } from 'typebox'
import { html } from '../html.ts'
import { formatLineTotal, formatMoney } from '../money.ts'
import { defineTemplate, page, textOf } from './template.ts'

const Id = Type.String({ minLength: 1, maxLength: 255 })
const Amount = Type.Number({ minimum: 0 })

const OrderLine = Type.Object({
  /** the product's name as the order recorded it; its id when it has none */
  name: Type.String({ minLength: 1, maxLength: 500 }),
  quantity: Type.Integer({ minimum: 1 }),
  /** the unit price (contracts' Money) */
  price: Amount,
})

export const orderPlacedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({
    orderId: Id,
    items: Type.Array(OrderLine, { minItems: 1, maxItems: 1000 }),
    total: Amount,
  }),
  render({ orderId, items, total }) {
    const subject = `Order ${orderId} placed`
    const lines = items.map(
      (item) =>
        `- ${item.quantity} × ${item.name} at ${formatMoney(item.price)}: ${formatLineTotal(item.price, item.quantity)}`,
    )
    const rows = items.map(
      (item) => html`<tr><td>${item.name}</td><td style="text-align: right">${item.quantity}</td>
<td style="text-align: right">${formatMoney(item.price)}</td><td style="text-align: right">${formatLineTotal(item.price, item.quantity)}</td></tr>
`,
    )
    return {
      subject,
      text: textOf(
        `Thank you: your order ${orderId} was placed. Its payment comes next; we will write again when it has shipped.`,
        lines.join('\n'),
        `Total: ${formatMoney(total)}`,
      ),
      html: page(
        subject,
        html`<p>Thank you: your order <strong>${orderId}</strong> was placed. Its payment comes next; we will write again when it has shipped.</p>
<table style="border-collapse: collapse; width: 100%">
<thead><tr><th style="text-align: left">Item</th><th style="text-align: right">Quantity</th><th style="text-align: right">Price</th><th style="text-align: right">Amount</th></tr></thead>
<tbody>
${rows}</tbody>
<tfoot><tr><th colspan="3" style="text-align: right">Total</th><th style="text-align: right">${formatMoney(total)}</th></tr></tfoot>
</table>`,
      ),
    }
  },
})

export const orderPaidMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({ orderId: Id, total: Amount }),
  render({ orderId, total }) {
    const subject = `Order ${orderId} paid`
    const said = `We received your payment of ${formatMoney(total)} for order ${orderId}. We are preparing it for shipping.`
    return { subject, text: textOf(said), html: page(subject, html`<p>${said}</p>`) }
  },
})

export const shipmentCreatedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({
    orderId: Id,
    carrier: Type.Optional(Type.String({ maxLength: 200 })),
    trackingNumber: Type.Optional(Type.String({ maxLength: 200 })),
  }),
  render({ orderId, carrier, trackingNumber }) {
    const subject = `Order ${orderId} shipped`
    const said = `Your order ${orderId} has shipped${carrier ? ` with ${carrier}` : ''}.`
    const tracking = trackingNumber ? `Tracking number: ${trackingNumber}` : undefined
    return {
      subject,
      text: textOf(said, tracking),
      html: page(subject, html`<p>${said}</p>${tracking ? html`<p>${tracking}</p>` : ''}`),
    }
  },
})

export const shipmentDeliveredMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({
    orderId: Id,
    /** the day, YYYY-MM-DD, as the carrier reported it */
    deliveredOn: Type.Optional(Type.String({ maxLength: 10 })),
  }),
  render({ orderId, deliveredOn }) {
    const subject = `Order ${orderId} delivered`
    const said = `Your order ${orderId} was delivered${deliveredOn ? ` on ${deliveredOn}` : ''}.`
    return { subject, text: textOf(said), html: page(subject, html`<p>${said}</p>`) }
  },
})

export const paymentFailedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({ orderId: Id, reason: Type.String({ maxLength: 1000 }) }),
  render({ orderId, reason }) {
    const subject = `Payment for order ${orderId} failed`
    const said = `The payment for your order ${orderId} failed: ${reason}`
    const next = 'You can place the order again with another payment method.'
    return { subject, text: textOf(said, next), html: page(subject, html`<p>${said}</p><p>${next}</p>`) }
  },
})
