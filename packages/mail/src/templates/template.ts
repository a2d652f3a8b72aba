// What a template is: the TypeBox schema of its data and a pure function from that data to a subject, a plain-text
// body and an HTML body; and the page every HTML body sits in.
import type { Static, TSchema } from 'typebox'
import { html, type SafeHtml } from '../html.ts'

/**
 * `notification`: about an order, a return, an account; the user may turn it off, and it carries List-Unsubscribe.
 * `security`: a password reset, an address to verify, a password changed; always sent, never with List-Unsubscribe.
 */
export type MailKind = 'notification' | 'security'

export interface RenderedMail {
  subject: string
  text: string
  html: string
}

export interface MailTemplate<Schema extends TSchema> {
  kind: MailKind
  /** the data it is rendered from, checked before rendering (a stored job's data is read back as JSON) */
  data: Schema
  render(data: Static<Schema>): RenderedMail
}

/** A template, its render typed by its schema. */
export const defineTemplate = <Schema extends TSchema>(
  template: MailTemplate<Schema>,
): MailTemplate<Schema> => template

/** The HTML document around a body: a heading, the body, no external resources (nothing to fetch, nothing to track). */
export function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head>
<body style="font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; color: #1f2933; line-height: 1.5; max-width: 600px; margin: 0 auto; padding: 24px">
<h1 style="font-size: 20px">${title}</h1>
${body}
</body>
</html>
`.toString()
}

/** Plain-text lines as one body: blank lines between paragraphs, one line break at the end. */
export const textOf = (...paragraphs: readonly (string | false | undefined)[]): string =>
  `${paragraphs.filter((each): each is string => typeof each === 'string').join('\n\n')}\n`
