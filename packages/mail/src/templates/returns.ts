// Mails about a return: requested (its lines and the refund to come), received, completed (refunded), rejected.
import { Type } from 'typebox'
import { html } from '../html.ts'
import { formatMoney } from '../money.ts'
import { defineTemplate, page, textOf } from './template.ts'

const Id = Type.String({ minLength: 1, maxLength: 255 })
const Amount = Type.Number({ minimum: 0 })
const ReturnIds = { returnId: Id, orderId: Id }

const ReturnLine = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 500 }),
  quantity: Type.Integer({ minimum: 1 }),
})

const units = (count: number) => `${count} ${count === 1 ? 'item' : 'items'}`

export const returnRequestedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({
    ...ReturnIds,
    items: Type.Array(ReturnLine, { minItems: 1, maxItems: 1000 }),
    refundAmount: Amount,
  }),
  render({ returnId, orderId, items, refundAmount }) {
    const subject = `Return ${returnId} requested`
    const said = `We have your return ${returnId} for order ${orderId}. Once the goods arrive, we refund ${formatMoney(refundAmount)}.`
    return {
      subject,
      text: textOf(said, items.map((item) => `- ${item.quantity} × ${item.name}`).join('\n')),
      html: page(
        subject,
        html`<p>${said}</p><ul>${items.map((item) => html`<li>${item.quantity} × ${item.name}</li>`)}</ul>`,
      ),
    }
  },
})

export const returnReceivedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({ ...ReturnIds, units: Type.Integer({ minimum: 1 }) }),
  render({ returnId, orderId, units: count }) {
    const subject = `Return ${returnId} received`
    const said = `The ${units(count)} of your return ${returnId} for order ${orderId} arrived. Your refund follows.`
    return { subject, text: textOf(said), html: page(subject, html`<p>${said}</p>`) }
  },
})

export const returnCompletedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({ ...ReturnIds, refundAmount: Amount }),
  render({ returnId, orderId, refundAmount }) {
    const subject = `Return ${returnId} refunded`
    const said = `Your return ${returnId} for order ${orderId} is complete: ${formatMoney(refundAmount)} refunded.`
    return { subject, text: textOf(said), html: page(subject, html`<p>${said}</p>`) }
  },
})

export const returnRejectedMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({ ...ReturnIds, reason: Type.String({ maxLength: 1000 }) }),
  render({ returnId, orderId, reason }) {
    const subject = `Return ${returnId} rejected`
    const said = `Your return ${returnId} for order ${orderId} was rejected: ${reason}`
    return { subject, text: textOf(said), html: page(subject, html`<p>${said}</p>`) }
  },
})
