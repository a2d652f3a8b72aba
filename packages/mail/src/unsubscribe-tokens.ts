// One-click unsubscribe tokens: which user, which notification type and which address a link turns off, signed with
// HMAC-SHA-256 under UNSUBSCRIBE_SECRET so that nobody can make one for someone else. A token is
// `<payload>.<signature>`, both base64url: the payload is the three values as JSON, the signature an HMAC over them,
// each length-prefixed (no two different triples sign the same text). Verification tries every secret of the
// rotation list (`new,old`) and compares in constant time. Tokens do not expire: a mail's unsubscribe link must work
// for as long as the mail is kept (RFC 8058); rotating the secret out retires the old links.
import { createHmac, timingSafeEqual } from 'node:crypto'

export interface UnsubscribeClaim {
  userId: string
  /** the notification type the link turns e-mail off for */
  type: string
  /** the address the mail was sent to */
  address: string
}

/** Longer tokens are refused before any work: three bounded values (an address is at most 254) and a signature fit
 * within it (about 510), and a link of any text as long, percent-encoded, stays under the header limit. */
export const maximumTokenLength = 800

/** What signs this purpose's tokens only: the same secret signing something else never makes a valid token. */
const purpose = 'meridian-unsubscribe-v1'

const base64url = /^[A-Za-z0-9_-]+$/

export interface UnsubscribeTokens {
  sign(claim: UnsubscribeClaim): string
  /** the claim of a token signed under any of the secrets; undefined for anything else (malformed, tampered) */
  verify(token: string): UnsubscribeClaim | undefined
}

/** The secrets of UNSUBSCRIBE_SECRET (`new,old`): the first signs. */
export function unsubscribeTokens(secrets: string): UnsubscribeTokens {
  const keys = secrets.split(',').filter((each) => each.length > 0)
  const [signing] = keys
  if (signing === undefined) throw new TypeError('UNSUBSCRIBE_SECRET holds no secret')
  const signatureOf = (secret: string, claim: UnsubscribeClaim): Buffer => {
    const hmac = createHmac('sha256', secret)
    for (const part of [purpose, claim.userId, claim.type, claim.address])
      hmac.update(`${part.length}:${part};`)
    return hmac.digest()
  }
  return {
    sign(claim) {
      const payload = Buffer.from(JSON.stringify([claim.userId, claim.type, claim.address])).toString(
        'base64url',
      )
      return `${payload}.${signatureOf(signing, claim).toString('base64url')}`
    },
    verify(token) {
      const claim = claimOf(token)
      if (claim === undefined) return undefined
      const given = Buffer.from(claim.signature, 'base64url')
      // every secret is tried (no early exit on a match), each comparison in constant time
      let valid = false
      for (const secret of keys) {
        const expected = signatureOf(secret, claim.claim)
        if (expected.length === given.length && timingSafeEqual(expected, given)) valid = true
      }
      return valid ? claim.claim : undefined
    },
  }
}

/** The token's claim and signature as sent, or undefined when it is not of the form. */
function claimOf(token: string): { claim: UnsubscribeClaim; signature: string } | undefined {
  if (token.length > maximumTokenLength) return undefined
  const [payload, signature, ...rest] = token.split('.')
  if (payload === undefined || signature === undefined || rest.length > 0) return undefined
  if (!base64url.test(payload) || !base64url.test(signature)) return undefined
  let values: unknown
  try {
    values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!Array.isArray(values) || values.length !== 3 || !values.every((each) => typeof each === 'string'))
    return undefined
  const [userId, type, address] = values as [string, string, string]
  return { claim: { userId, type, address }, signature }
}
