// The headers that make a mail recognisable and easy to leave: a Message-ID that follows from an idempotency key (a
// resend of the same mail carries the same one, so a receiver, or a person, sees it is the same mail), and RFC 2369's
// List-Unsubscribe with RFC 8058's one-click List-Unsubscribe-Post on every mail that is not a security mail.
import { createHash } from 'node:crypto'

/** The address part of a mailbox (`Name <a@b>` -> `a@b`). */
export function addressOf(mailbox: string): string {
  const open = mailbox.lastIndexOf('<')
  return open === -1 ? mailbox.trim() : mailbox.slice(open + 1, mailbox.indexOf('>', open)).trim()
}

/** The domain of a mailbox's address, lower case. */
export const domainOf = (mailbox: string): string => {
  const address = addressOf(mailbox)
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase()
}

/**
 * The Message-ID of the mail sent under `idempotencyKey`, in the sender's domain (RFC 5322's msg-id): the key's SHA-256
 * in hex, so the same key always gives the same id and the id tells nothing of what the key holds.
 */
export function messageIdFor(idempotencyKey: string, fromMailbox: string): string {
  const digest = createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 40)
  return `<${digest}.meridian@${domainOf(fromMailbox)}>`
}

export interface UnsubscribeTarget {
  /** the one-click endpoint's public address (UNSUBSCRIBE_URL) */
  url: string
  /** the signed token (unsubscribe-tokens.ts) */
  token: string
  /** an address that takes unsubscribe requests by mail (UNSUBSCRIBE_MAILTO), when the deployment has one */
  mailto?: string | undefined
}

/** The link a mail's List-Unsubscribe and its footer point at: the endpoint with the token. */
export const unsubscribeLink = ({ url, token }: UnsubscribeTarget): string =>
  `${url}?token=${encodeURIComponent(token)}`

/**
 * List-Unsubscribe (the https link, then the mailto when configured) and List-Unsubscribe-Post: List-Unsubscribe=One-Click
 * (RFC 8058: a mail client POSTs that body to the link, without cookies or a page to click through).
 */
export function listUnsubscribeHeaders(target: UnsubscribeTarget): Record<string, string> {
  const entries = [`<${unsubscribeLink(target)}>`]
  if (target.mailto)
    entries.push(`<mailto:${target.mailto}?subject=${encodeURIComponent(`unsubscribe ${target.token}`)}>`)
  return {
    'List-Unsubscribe': entries.join(', '),
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  }
}
