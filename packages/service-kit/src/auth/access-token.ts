// Verification of access tokens (JWT) with fast-jwt: one algorithm, our keys only, iss/aud/exp/nbf always checked.
//
// fast-jwt is the engine of @fastify/jwt, used here directly: @fastify/jwt builds a new verifier on every call that
// passes a key, and an RS256 key is chosen per token (by kid), so through it every request paid for a verifier. Here
// each key gets one verifier, kept while the key is in use; in front of them, the tokens verified in the last
// minute, found by the token itself (verified-tokens.ts): a client sends the same token for its whole lifetime.
import type { KeyObject } from 'node:crypto'
import { createPublicKey } from 'node:crypto'
import { createVerifier } from 'fast-jwt'
import type { FastifyInstance } from 'fastify'
import { createJwksKeySource, JwksUnavailableError, jwksDefaults, jwksUrlsOf } from './jwks-key-source.ts'
import { type TokenClaims, VerifiedTokens } from './verified-tokens.ts'

export type { TokenClaims } from './verified-tokens.ts'

export type JwtVerification =
  /** other services: keys from auth's JWKS (refetch and cache timings are optional, see jwksDefaults) */
  | { algorithm: 'RS256'; jwksUrl: string; refetchIntervalMs?: number; cacheTtlMs?: number }
  /** auth itself: its own key ring (a private key is accepted; only its public half is used) */
  | { algorithm: 'RS256'; keys: (kid: string) => Promise<KeyObject | undefined> }
  | { algorithm: 'HS256'; secret: string }

export interface AccessTokenOptions {
  jwt: JwtVerification
  issuer: string
  audience: string
}

/** Why a token was refused: every one of these answers 401 `Invalid or expired token`. */
export class InvalidTokenError extends Error {
  constructor(reason: string, options?: ErrorOptions) {
    super(reason, options)
    this.name = 'InvalidTokenError'
  }
}

export interface AccessTokenVerifier {
  /**
   * The claims of a valid token. Throws InvalidTokenError for any bad token, JwksUnavailableError when the JWKS
   * cannot be read; an error of a `keys` resolver passes through as it is.
   */
  verify(token: string, options?: VerifyOptions): Promise<TokenClaims>
  /** how many verified tokens are remembered now */
  readonly remembered: number
}

export interface VerifyOptions {
  /**
   * false: a token verified now is not remembered (one already remembered is still used). For a credential verified
   * once per connection (a WebSocket's handshake): the connection keeps its principal itself, and tens of thousands
   * of connections would fill the cache with tokens never presented again. Default true.
   */
  remember?: boolean
}

/** Skew allowed between auth's clock and ours for exp and nbf. */
export const clockToleranceMs = 5000
const maxKidLength = 256
export const minimumSecretLength = 32

export function assertValidJwtVerification(jwt: JwtVerification): void {
  if (jwt.algorithm === 'HS256') {
    if (typeof jwt.secret !== 'string' || jwt.secret.length < minimumSecretLength) {
      throw new Error(`auth: the HS256 secret must be at least ${minimumSecretLength} characters`)
    }
  } else if (jwt.algorithm === 'RS256') {
    const urls = 'jwksUrl' in jwt ? jwksUrlsOf(jwt.jwksUrl) : undefined
    if (urls && (urls.length === 0 || !urls.every((url) => /^https?:\/\//.test(url)))) {
      throw new Error('auth: jwksUrl must be an http(s) URL, or several comma-separated')
    }
    if (!('jwksUrl' in jwt) && typeof jwt.keys !== 'function') {
      throw new Error('auth: RS256 needs a jwksUrl or a keys resolver')
    }
  } else {
    throw new Error(`auth: unsupported JWT algorithm ${String((jwt as { algorithm: unknown }).algorithm)}`)
  }
}

/** Tokens taken on trust once verified: how many, and for how long at most (never past their exp). */
export const verifiedTokenCache = { capacity: 10_000, maxAgeMs: 60_000 }

export async function createAccessTokenVerifier(
  app: FastifyInstance,
  options: AccessTokenOptions,
): Promise<AccessTokenVerifier> {
  const { jwt: verification } = options
  assertValidJwtVerification(verification)
  const verifierFor = (key: string) =>
    createVerifier({
      key,
      // an allow-list of exactly one: `none`, HS256-with-the-public-key and every other algorithm are refused
      algorithms: [verification.algorithm],
      allowedIss: options.issuer,
      allowedAud: options.audience,
      requiredClaims: ['exp', 'iss', 'aud', 'sub'],
      clockTolerance: clockToleranceMs,
    })
  const verified = new VerifiedTokens({ ...verifiedTokenCache, clockToleranceMs })

  if (verification.algorithm === 'HS256') {
    const verifier = verifierFor(verification.secret)
    return {
      get remembered() {
        return verified.size
      },
      async verify(token, { remember = true } = {}) {
        const known = verified.get(token)
        if (known) return known.claims
        const claims = verifyWith(() => verifier(token))
        return remember ? verified.remember(token, claims) : Object.freeze(claims)
      },
    }
  }

  const publicKeyPem =
    'jwksUrl' in verification
      ? publicKeysFromJwks(app, verification)
      : publicKeysFromResolver(verification.keys)
  // a handful of keys at a time (next, current, retired): the map is simply started afresh should it ever reach 16
  let verifiers = new Map<string, ReturnType<typeof verifierFor>>()

  return {
    get remembered() {
      return verified.size
    },
    async verify(token, { remember = true } = {}) {
      // a token seen a moment ago: only its key is looked up again (still in the key set, still the same)
      const known = verified.get(token)
      if (known?.key && (await publicKeyPem(known.key.kid)) === known.key.pem) return known.claims
      const kid = rs256KeyId(token)
      const pem = await publicKeyPem(kid)
      if (pem === undefined) throw new InvalidTokenError(`unknown key id ${kid}`)
      let verifier = verifiers.get(pem)
      if (verifier === undefined) {
        if (verifiers.size >= 16) verifiers = new Map()
        verifier = verifierFor(pem)
        verifiers.set(pem, verifier)
      }
      const verify = verifier
      const claims = verifyWith(() => verify(token))
      return remember ? verified.remember(token, claims, { kid, pem }) : Object.freeze(claims)
    },
  }
}

function verifyWith(verify: () => unknown): Record<string, unknown> {
  let claims: unknown
  try {
    claims = verify()
  } catch (error) {
    throw new InvalidTokenError((error as Error).message, { cause: error })
  }
  if (typeof claims !== 'object' || claims === null)
    throw new InvalidTokenError('the payload is not an object')
  return claims as Record<string, unknown>
}

/**
 * The kid of a token that claims RS256, read before any key is looked up: a token of another algorithm, or one
 * without a kid, never costs a JWKS fetch. Other header fields (`jwk`, `jku`, `x5u`, `x5c`) are never looked at.
 */
/** The JOSE header alone (the payload is decoded once, by the verifier): the first base64url segment, as JSON. */
function tokenHeader(token: string): Record<string, unknown> {
  const end = token.indexOf('.')
  let header: unknown
  try {
    header = end > 0 ? JSON.parse(Buffer.from(token.slice(0, end), 'base64url').toString('utf8')) : undefined
  } catch (error) {
    throw new InvalidTokenError('malformed token', { cause: error })
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    throw new InvalidTokenError('malformed token')
  return header as Record<string, unknown>
}

function rs256KeyId(token: string): string {
  const header = tokenHeader(token)
  if (header.alg !== 'RS256') throw new InvalidTokenError(`algorithm ${String(header.alg)} is not accepted`)
  const { kid } = header
  if (typeof kid !== 'string' || kid === '' || kid.length > maxKidLength) {
    throw new InvalidTokenError('an RS256 token needs a kid')
  }
  return kid
}

function publicKeysFromJwks(
  app: FastifyInstance,
  verification: { jwksUrl: string; refetchIntervalMs?: number; cacheTtlMs?: number },
): (kid: string) => Promise<string | undefined> {
  const source = createJwksKeySource({
    jwksUrl: verification.jwksUrl,
    refetchIntervalMs: verification.refetchIntervalMs ?? jwksDefaults.refetchIntervalMs,
    cacheTtlMs: verification.cacheTtlMs ?? jwksDefaults.cacheTtlMs,
    timeoutMs: jwksDefaults.timeoutMs,
  })
  app.addHook('onClose', () => source.close())
  return async (kid) => {
    try {
      return await source.publicKeyPem(kid)
    } catch (error) {
      if (error instanceof JwksUnavailableError) throw error
      throw new InvalidTokenError(`no usable key for kid ${kid}`, { cause: error })
    }
  }
}

function publicKeysFromResolver(
  keys: (kid: string) => Promise<KeyObject | undefined>,
): (kid: string) => Promise<string | undefined> {
  // fast-jwt takes PEM strings from a caller; exporting once per KeyObject keeps that off the request path
  const pems = new WeakMap<KeyObject, string>()
  return async (kid) => {
    const key = await keys(kid)
    if (!key) return undefined
    let pem = pems.get(key)
    if (pem === undefined) {
      const publicKey = key.type === 'private' ? createPublicKey(key) : key
      if (publicKey.type !== 'public' || publicKey.asymmetricKeyType !== 'rsa') {
        throw new InvalidTokenError(`the key of kid ${kid} is not an RSA key`)
      }
      pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
      pems.set(key, pem)
    }
    return pem
  }
}
