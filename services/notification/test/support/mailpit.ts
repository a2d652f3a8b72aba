// What the e-mail tests read in a Mailpit through @meridian/testkit's mailbox(): the messages to one recipient (each
// test mails its own unique addresses, so files can share the development Mailpit), and RFC 2369's link and RFC 8058's
// one-click marker as a mail arrived with them.
import type { Mail, Mailbox, MailSummary } from '@meridian/testkit'

/** Every message to `address` (To, Cc or Bcc, exactly), newest first. */
export async function messagesTo(box: Mailbox, address: string, limit = 50): Promise<MailSummary[]> {
  const wanted = address.toLowerCase()
  const found = await box.search(`to:"${address}"`, limit)
  return found.filter((summary) =>
    [...summary.to, ...summary.cc, ...summary.bcc].some((each) => each.address.toLowerCase() === wanted),
  )
}

/** A mail's List-Unsubscribe links (`<…>` in order) and its List-Unsubscribe-Post value. */
export function unsubscribeHeadersOf(mail: Mail): { links: string[]; post: string | undefined } {
  const header = mail.headers['List-Unsubscribe']?.join(', ') ?? ''
  const links = [...header.matchAll(/<([^>]*)>/g)].map((match) => match[1] ?? '')
  return { links, post: mail.headers['List-Unsubscribe-Post']?.[0] }
}
