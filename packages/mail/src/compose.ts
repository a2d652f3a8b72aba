// A mail ready for the transport: a template rendered for one recipient, with its deterministic Message-ID and, unless
// it is a security mail, the List-Unsubscribe headers and an unsubscribe line at the end of both bodies.

import { listUnsubscribeHeaders, messageIdFor, type UnsubscribeTarget, unsubscribeLink } from './headers.ts'
import { html } from './html.ts'
import type { RenderedTemplate } from './templates/index.ts'

/** What the transport sends (a subset of nodemailer's message options). */
export interface ComposedMail {
  from: string
  to: string
  subject: string
  text: string
  html: string
  messageId: string
  headers: Record<string, string>
}

export interface ComposeOptions {
  /** MAIL_FROM */
  from: string
  /** the recipient's address */
  to: string
  rendered: RenderedTemplate
  /** what makes the Message-ID: the same key, the same id (e.g. `notification:<id>`) */
  idempotencyKey: string
  /** required for a notification mail; a security mail has none */
  unsubscribe?: UnsubscribeTarget | undefined
}

const footerText = (link: string) =>
  `--\nYou receive this mail because of your Meridian account. To stop mails of this kind: ${link}\n`

const footerHtml = (link: string) =>
  html`<hr style="border: none; border-top: 1px solid #d9e2ec; margin-top: 32px">
<p style="font-size: 12px; color: #52606d">You receive this mail because of your Meridian account. <a href="${link}">Stop mails of this kind</a>.</p>
`.toString()

export function composeMail({
  from,
  to,
  rendered,
  idempotencyKey,
  unsubscribe,
}: ComposeOptions): ComposedMail {
  const messageId = messageIdFor(idempotencyKey, from)
  const base = { from, to, subject: rendered.subject, messageId }
  if (rendered.kind === 'security') return { ...base, text: rendered.text, html: rendered.html, headers: {} }
  if (unsubscribe === undefined) throw new TypeError(`a '${rendered.name}' mail needs its unsubscribe link`)
  const link = unsubscribeLink(unsubscribe)
  return {
    ...base,
    text: `${rendered.text}\n${footerText(link)}`,
    html: rendered.html.replace('</body>', `${footerHtml(link)}</body>`),
    headers: listUnsubscribeHeaders(unsubscribe),
  }
}
