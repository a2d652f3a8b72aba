// RS256 public keys of auth, read from its JWKS: cached by kid (get-jwks), refetched for an unknown kid sparingly; with
// several addresses (auth's instances on several hosts), the next is asked when one does not answer.
import { createPublicKey } from 'node:crypto'
import buildGetJwks from 'get-jwks'
import { Agent } from 'undici'

export interface JwksKeySourceOptions {
  /**
   * where the JWKS is read: one URL, or several comma-separated (each instance of auth, for a deployment across
   * hosts): a key is looked up at the last one that answered, and at the next when it does not
   */
  jwksUrl: string
  /** how long a key stays cached by its kid */
  cacheTtlMs: number
  /**
   * After a fetch that did not find the kid (or failed), other unknown kids are refused without fetching for this
   * long: a flood of random kids costs auth one request per interval.
   */
  refetchIntervalMs: number
  timeoutMs: number
}

export const jwksDefaults = { cacheTtlMs: 10 * 60_000, refetchIntervalMs: 30_000, timeoutMs: 5000 }

/** The JWKS could not be read (auth down, bad answer): the token may well be valid, so this is not a 401. */
export class JwksUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the JWKS could not be fetched', { cause })
    this.name = 'JwksUnavailableError'
  }
}

export interface JwksKeySource {
  /** the PEM of the RSA signing key with this kid, undefined when the JWKS has none (or a refetch is not due yet) */
  publicKeyPem(kid: string): Promise<string | undefined>
  close(): Promise<void>
}

type Jwk = Awaited<ReturnType<ReturnType<typeof buildGetJwks>['getJwk']>>

/** What a JWKS answer that lacks the kid looks like to get-jwks (as opposed to a failed request). */
const missingKeyCodes = new Set(['JWK_NOT_FOUND', 'NO_JWKS'])

/** The addresses of a JWKS setting: one URL or several, comma-separated. */
export const jwksUrlsOf = (jwksUrl: string): string[] =>
  jwksUrl
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean)

export function createJwksKeySource(options: JwksKeySourceOptions): JwksKeySource {
  const urls = jwksUrlsOf(options.jwksUrl)
  if (urls.length <= 1) return singleJwksSource(options)
  return firstAnswering(urls.map((jwksUrl) => singleJwksSource({ ...options, jwksUrl })))
}

/**
 * Several copies of one key set (auth's instances share their keys): asked at the one that answered last, then in
 * turn when it cannot be read. A kid the answering copy does not have is unknown (the copies are the same set).
 */
function firstAnswering(sources: JwksKeySource[]): JwksKeySource {
  let preferred = 0
  return {
    async publicKeyPem(kid) {
      let failure: unknown
      for (let i = 0; i < sources.length; i++) {
        const index = (preferred + i) % sources.length
        try {
          const pem = await (sources[index] as JwksKeySource).publicKeyPem(kid)
          preferred = index
          return pem
        } catch (error) {
          if (!(error instanceof JwksUnavailableError)) throw error
          failure = error
        }
      }
      throw failure
    },
    async close() {
      await Promise.all(sources.map((source) => source.close()))
    },
  }
}

function singleJwksSource(options: JwksKeySourceOptions): JwksKeySource {
  const url = new URL(options.jwksUrl)
  // get-jwks fetches `${domain}${jwksPath}`; the domain is always ours, never a token's `iss` or `jku`
  const domain = `${url.origin}/`
  const jwksPath = `${url.pathname.slice(1)}${url.search}`
  // global fetch ignores get-jwks' `timeout` option; the dispatcher's timeouts are what bound a hung auth
  const agent = new Agent({
    connect: { timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  })
  const getJwks = buildGetJwks({
    jwksPath,
    ttl: options.cacheTtlMs,
    max: 100,
    // Node's fetch accepts this undici's Agent at runtime; only their type declarations differ
    fetchOptions: { dispatcher: agent } as unknown as NonNullable<
      Parameters<typeof buildGetJwks>[0]
    >['fetchOptions'],
  })
  const pems = new WeakMap<Jwk, string>()
  let lastFailure: { at: number; unavailable: boolean } | undefined
  // fetches for kids not in the cache run one at a time, so concurrent random kids cannot each start one
  let uncachedTurn: Promise<unknown> = Promise.resolve()

  const signature = (kid: string) => ({ domain, alg: 'RS256', kid })
  // the cache key of each kid met lately (looked up on every verification); started afresh at 64, since a kid is
  // whatever a token says
  let cacheKeys = new Map<string, string>()
  function cacheKey(kid: string): string {
    let key = cacheKeys.get(kid)
    if (key === undefined) {
      if (cacheKeys.size >= 64) cacheKeys = new Map()
      key = getJwks.generateCacheKey('RS256', kid, domain)
      cacheKeys.set(kid, key)
    }
    return key
  }
  /** cached and fresh, or being fetched right now (get-jwks caches the pending promise; its typing omits that) */
  const cached = (key: string): Jwk | Promise<Jwk> | undefined => getJwks.cache.get(key)

  function pemOf(jwk: Jwk): string | undefined {
    if (jwk.kty !== 'RSA' || (jwk.use !== undefined && jwk.use !== 'sig')) return undefined
    let pem = pems.get(jwk)
    if (pem === undefined) {
      pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString()
      pems.set(jwk, pem)
    }
    return pem
  }

  /** the key from get-jwks (its cache, or one request shared by everyone asking for this kid meanwhile) */
  const lookup = (kid: string) => settle(getJwks.getJwk(signature(kid)))

  async function settle(jwk: Jwk | Promise<Jwk>): Promise<string | undefined> {
    try {
      return pemOf(await jwk)
    } catch (error) {
      const unavailable = !missingKeyCodes.has((error as { code?: string }).code ?? '')
      lastFailure = { at: Date.now(), unavailable }
      if (unavailable) throw new JwksUnavailableError(error)
      return undefined
    }
  }

  async function fetchUncached(kid: string): Promise<string | undefined> {
    const key = cacheKey(kid)
    // fetched by an earlier turn for the same kid
    const fetched = cached(key)
    if (fetched !== undefined) return settle(fetched)
    if (lastFailure && Date.now() - lastFailure.at < options.refetchIntervalMs) {
      // a kid we knew until its cache entry expired stays usable meanwhile, so a flood cannot lock users out
      const lastKnown = getJwks.staleCache.get(key)
      if (lastKnown) return pemOf(await lastKnown)
      if (lastFailure.unavailable) throw new JwksUnavailableError('refetch not due yet')
      return undefined
    }
    return lookup(kid)
  }

  return {
    async publicKeyPem(kid) {
      // cached, or being fetched right now: get-jwks shares the one request
      const known = cached(cacheKey(kid))
      if (known !== undefined) return settle(known)
      const turn = uncachedTurn.then(() => fetchUncached(kid))
      uncachedTurn = turn.catch(() => undefined)
      return turn
    },
    close: () => agent.close(),
  }
}
