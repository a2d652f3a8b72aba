// The one place a template is added: a name and its template (templates/template.ts says what one is). Each name's
// data type follows from its schema, so a caller cannot pass the wrong data, and data read back from storage is
// checked before it is rendered.
import type { Static } from 'typebox'
import { Value } from 'typebox/value'
import {
  addressChangeRequestedMail,
  passwordChangedMail,
  passwordResetMail,
  verifyAddressMail,
  welcomeMail,
} from './account.ts'
import {
  exchangeAwaitingGoodsMail,
  exchangeCompletedMail,
  exchangeFailedMail,
  exchangeRequestedMail,
} from './exchanges.ts'
import {
  orderPaidMail,
  orderPlacedMail,
  paymentFailedMail,
  shipmentCreatedMail,
  shipmentDeliveredMail,
} from './orders.ts'
import {
  returnCompletedMail,
  returnReceivedMail,
  returnRejectedMail,
  returnRequestedMail,
} from './returns.ts'
import type { MailKind, RenderedMail } from './template.ts'

/** Every template by name. A notification's mail is named as its notification type. */
export const mailTemplates = {
  order_placed: orderPlacedMail,
  order_paid: orderPaidMail,
  payment_failed: paymentFailedMail,
  shipment_created: shipmentCreatedMail,
  shipment_delivered: shipmentDeliveredMail,
  return_requested: returnRequestedMail,
  return_received: returnReceivedMail,
  return_completed: returnCompletedMail,
  return_rejected: returnRejectedMail,
  exchange_requested: exchangeRequestedMail,
  exchange_awaiting_goods: exchangeAwaitingGoodsMail,
  exchange_completed: exchangeCompletedMail,
  exchange_failed: exchangeFailedMail,
  welcome: welcomeMail,
  password_reset: passwordResetMail,
  verify_address: verifyAddressMail,
  password_changed: passwordChangedMail,
  address_change_requested: addressChangeRequestedMail,
} as const

export type TemplateName = keyof typeof mailTemplates
export type TemplateData<Name extends TemplateName> = Static<(typeof mailTemplates)[Name]['data']>

export const templateNames = Object.keys(mailTemplates) as TemplateName[]

export const isTemplateName = (name: string): name is TemplateName => Object.hasOwn(mailTemplates, name)

export interface RenderedTemplate extends RenderedMail {
  name: TemplateName
  kind: MailKind
}

/** Renders a template from its typed data. */
export function renderTemplate<Name extends TemplateName>(
  name: Name,
  data: TemplateData<Name>,
): RenderedTemplate {
  return renderStoredTemplate(name, data)
}

/**
 * Renders a template by a name and data read back from storage: a TypeError when the name is no template's or the
 * data does not match its schema (the message names the first problem, never the data's values).
 */
export function renderStoredTemplate(name: string, data: unknown): RenderedTemplate {
  if (!isTemplateName(name)) throw new TypeError(`no mail template is named '${name}'`)
  const template = mailTemplates[name]
  if (!Value.Check(template.data, data)) {
    const [first] = Value.Errors(template.data, data)
    throw new TypeError(
      `the data of mail template '${name}' is invalid: ${first?.instancePath ?? ''} ${first?.message ?? ''}`.trim(),
    )
  }
  // the check above is the schema's: each template's render takes exactly its schema's data
  const render = template.render as (checked: unknown) => RenderedMail
  return { name, kind: template.kind, ...render(data) }
}
