// Holds the provider instance in use and builds a new one when the signing keys change (rotation).
import type { JsonWebKey } from 'node:crypto'
import type Provider from 'oidc-provider'
import type { KeyRing } from '../domain/signing-keys.ts'

export interface ProviderHostLogger {
  info(details: object, message: string): void
  error(details: object, message: string): void
}

export interface ProviderHost {
  /** the provider for this request; hold it for the request's duration only */
  current(): Provider
  /** the provider's Node request handler (Koa's callback), built once per provider */
  handler(): ReturnType<Provider['callback']>
  /** builds the provider now when the key ring has keys, so that a configuration error fails the boot */
  prepare(): void
  close(): void
}

/**
 * oidc-provider takes its keys at construction, so a rotation builds a new provider with the key ring's new private
 * JWKs and later requests use it. Nothing is lost: sessions, interactions, grants, codes and tokens live in
 * PostgreSQL and the cookies are signed with OIDC_COOKIE_KEYS, not with these keys; a request already inside the old
 * provider finishes there. A build that fails (a key the provider rejects) keeps the previous provider and is logged.
 *
 * The first provider is built when the app is ready (prepare) or on the first request, not here: main.ts builds the
 * app before the database is migrated and starts the key ring only then, so at build time the ring may have no key.
 */
export function createProviderHost(
  build: (signingKeys: JsonWebKey[]) => Provider,
  keyRing: KeyRing,
  logger: ProviderHostLogger,
): ProviderHost {
  let built: { provider: Provider; handler: ReturnType<Provider['callback']> } | undefined
  let closed = false

  function buildWithCurrentKeys() {
    const signingKeys = keyRing.privateJwks()
    if (signingKeys.length === 0) throw new Error('the key ring has no signing key: start() it first')
    const provider = build(signingKeys)
    return { provider, handler: provider.callback() }
  }

  function ready() {
    built ??= buildWithCurrentKeys()
    return built
  }

  // the key ring has no way to remove a listener: after close() it is ignored
  keyRing.onChange(() => {
    if (closed || !built) return
    try {
      built = buildWithCurrentKeys()
      logger.info({}, 'OpenID provider rebuilt with the rotated signing keys')
    } catch (error) {
      logger.error({ err: error }, 'OpenID provider rebuild failed; the previous keys stay in use')
    }
  })

  return {
    current: () => ready().provider,
    handler: () => ready().handler,
    prepare() {
      if (keyRing.privateJwks().length > 0) ready()
    },
    close() {
      closed = true
    },
  }
}
