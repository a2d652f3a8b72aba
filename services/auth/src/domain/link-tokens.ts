// The tokens of the links auth mails (a password reset, an address to prove): 32 random bytes in base64url, stored
// only as their SHA-256 (hex), appended to the page's address after a `/` (in its fragment, where no server receives
// it). Anything not of the form is refused before any look-up.
import { createHash, randomBytes } from 'node:crypto'

const tokenFormat = /^[A-Za-z0-9_-]{43}$/

/** A new token. */
export const newLinkToken = (): string => randomBytes(32).toString('base64url')

/** What is stored of a token. */
export const linkTokenHash = (token: string): string => createHash('sha256').update(token).digest('hex')

/** Whether the text could be a token made here. */
export const isLinkToken = (text: string): boolean => tokenFormat.test(text)

/** The page's address, `/`, the token (the address's trailing slashes dropped). */
export function linkTo(pageUrl: string, token: string): string {
  let base = pageUrl
  while (base.endsWith('/')) base = base.slice(0, -1)
  return `${base}/${token}`
}
