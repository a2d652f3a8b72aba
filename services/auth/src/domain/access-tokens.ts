// Access tokens: short-lived JWTs with the spec's claims, RS256 with the key ring's current key (kid in the header)
// or HS256 with the shared secret when JWT_ALGORITHM=HS256. `email_verified` says whether the user had proved their
// address when the token was issued (the order service's limit for unproved customers reads it).
import type { TokenClaims } from '@meridian/contracts'
import { createSigner } from 'fast-jwt'
import type { KeyRing } from './signing-keys.ts'

/** Who a token is about: the fields of a user that become claims. */
export interface TokenSubject {
  id: string
  name: string
  email: string
  role: string
  /** whether the address is proved: the `email_verified` claim (left out when not known) */
  emailVerified?: boolean
}

export type AccessTokenSigning =
  | { algorithm: 'RS256'; keyRing: KeyRing }
  | { algorithm: 'HS256'; secret: string }

export interface AccessTokenOptions {
  signing: AccessTokenSigning
  issuer: string
  audience: string
  ttlSeconds: number
  /** milliseconds since the epoch */
  clock?: () => number
}

type Sign = (payload: Record<string, unknown>) => string

export function createAccessTokenIssuer(options: AccessTokenOptions) {
  const { signing, issuer, audience, ttlSeconds } = options
  const clock = options.clock ?? Date.now
  const common = { iss: issuer, aud: audience, expiresIn: ttlSeconds * 1000 }
  // one signer per key: creating a signer parses the key, and the signing key changes only at rotation
  const signers = new Map<string, Sign>()

  function signer(): Sign {
    if (signing.algorithm === 'HS256') {
      let hs = signers.get('HS256')
      if (!hs) {
        hs = createSigner({ ...common, algorithm: 'HS256', key: signing.secret })
        signers.set('HS256', hs)
      }
      return hs
    }
    const { kid, privateKey } = signing.keyRing.signingKey()
    let rs = signers.get(kid)
    if (!rs) {
      const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
      rs = createSigner({ ...common, algorithm: 'RS256', kid, key: pem })
      // only the current key signs: drop signers of keys that rotated out
      signers.clear()
      signers.set(kid, rs)
    }
    return rs
  }

  return {
    ttlSeconds,
    /** A signed access token for the user; `expiresIn` in seconds. */
    issue(subject: TokenSubject): { accessToken: string; expiresIn: number } {
      const claims: Omit<TokenClaims, 'exp' | 'iss' | 'aud'> = {
        sub: subject.id,
        name: subject.name,
        email: subject.email,
        role: subject.role,
        // every role the subject holds; a user holds exactly one
        roles: [subject.role],
        ...(subject.emailVerified === undefined ? {} : { email_verified: subject.emailVerified }),
        iat: Math.floor(clock() / 1000),
      }
      return { accessToken: signer()(claims), expiresIn: ttlSeconds }
    },
  }
}

export type AccessTokenIssuer = ReturnType<typeof createAccessTokenIssuer>
