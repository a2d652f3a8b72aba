// Mails about an account: the welcome (a notification), and the security mails, which the user cannot turn off and
// which carry no List-Unsubscribe: a password reset link, an address to verify, a password changed, and the notice to
// an account's address that a change of it to another was asked for. How long a link works reads as a person says
// it (duration.ts: "24 hours", not "1440 minutes").
import { Type } from 'typebox'
import { formatDuration } from '../duration.ts'
import { html } from '../html.ts'
import { defineTemplate, page, textOf } from './template.ts'

const Link = Type.String({ pattern: '^https?://[^\\s]{1,1990}$', maxLength: 2000 })
const Minutes = Type.Integer({ minimum: 1, maximum: 10_080 })

export const welcomeMail = defineTemplate({
  kind: 'notification',
  data: Type.Object({ name: Type.String({ maxLength: 200 }) }),
  render({ name }) {
    const subject = 'Welcome to Meridian'
    const said = `${name ? `Hello ${name}, welcome` : 'Welcome'} to Meridian. Your account is ready.`
    return { subject, text: textOf(said), html: page(subject, html`<p>${said}</p>`) }
  },
})

const notYou =
  'If you did not ask for this, you can ignore this mail: nothing changes until the link is used.'

export const passwordResetMail = defineTemplate({
  kind: 'security',
  data: Type.Object({ resetUrl: Link, expiresInMinutes: Minutes }),
  render({ resetUrl, expiresInMinutes }) {
    const subject = 'Reset your Meridian password'
    const said = `Someone asked to reset the password of your Meridian account. The link works once, for ${formatDuration(expiresInMinutes)}:`
    return {
      subject,
      text: textOf(said, resetUrl, notYou),
      html: page(
        subject,
        html`<p>${said}</p><p><a href="${resetUrl}">Choose a new password</a></p><p>${notYou}</p>`,
      ),
    }
  },
})

export const verifyAddressMail = defineTemplate({
  kind: 'security',
  data: Type.Object({ verifyUrl: Link, expiresInMinutes: Minutes }),
  render({ verifyUrl, expiresInMinutes }) {
    const subject = 'Confirm your e-mail address'
    const said = `Please confirm that this address is yours. The link works for ${formatDuration(expiresInMinutes)}:`
    return {
      subject,
      text: textOf(said, verifyUrl, notYou),
      html: page(
        subject,
        html`<p>${said}</p><p><a href="${verifyUrl}">Confirm my address</a></p><p>${notYou}</p>`,
      ),
    }
  },
})

export const passwordChangedMail = defineTemplate({
  kind: 'security',
  data: Type.Object({ changedAt: Type.String({ format: 'date-time', maxLength: 64 }) }),
  render({ changedAt }) {
    const subject = 'Your Meridian password was changed'
    const said = `The password of your Meridian account was changed at ${changedAt} (UTC).`
    const notYours =
      'If you did not change it, reset your password now and tell us: someone else may have it.'
    return {
      subject,
      text: textOf(said, notYours),
      html: page(subject, html`<p>${said}</p><p>${notYours}</p>`),
    }
  },
})

export const addressChangeRequestedMail = defineTemplate({
  kind: 'security',
  data: Type.Object({ requestedAt: Type.String({ format: 'date-time', maxLength: 64 }) }),
  render({ requestedAt }) {
    const subject = 'A change of your Meridian address was asked for'
    const said = `At ${requestedAt} (UTC), someone who knew the password of your Meridian account asked to change its e-mail address to another. The change takes effect only when the link mailed to the new address is used.`
    const notYours = 'If you did not ask for it, reset your password now: someone else may have it.'
    return {
      subject,
      text: textOf(said, notYours),
      html: page(subject, html`<p>${said}</p><p>${notYours}</p>`),
    }
  },
})
