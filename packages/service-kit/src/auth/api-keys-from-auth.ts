// API keys for services other than auth: each presented key is introspected at auth (POST
// /internal/api-keys/introspect, with the service credential), and the answer kept briefly so a busy key does not
// cost a call per request.
import { createHash } from 'node:crypto'
import { type ApiKeyIntrospection, AppError, ErrorCode } from '@meridian/contracts'
import type { ConsulClientOptions } from '../registry/consul-client.ts'
import type { RegistryLogger } from '../registry/registry-logger.ts'
import type { ServiceClient } from '../service-client.ts'
import { createDiscoveredUpstream } from '../upstream/discovered-upstream.ts'
import { createUpstreamClient, type UpstreamClient } from '../upstream/upstream-client.ts'
import type { Principal } from './principal.ts'

export type ApiKeysFromAuthOptions = ApiKeysFromAuthTimings &
  (
    | {
        /** auth's base URL, e.g. http://127.0.0.1:3001 (a service can take the origin of AUTH_JWKS_URL) */
        authUrl: string
        /** SERVICE_CREDENTIAL: the introspection is one of auth's /internal/ routes */
        serviceCredential: string
        upstream?: never
      }
    | {
        /**
         * a client of auth the service already has (createDiscoveredUpstream: auth found in Consul, which sends the
         * service credential); not closed here
         */
        upstream: UpstreamClient
        authUrl?: never
        serviceCredential?: never
      }
  )

interface ApiKeysFromAuthTimings {
  /**
   * how long an accepted key is believed without asking again: a revocation takes up to this long to reach here, and
   * so does a change of whether the owner's address is verified (the answer's `emailVerified`), which revokes nothing
   */
  acceptedForMs?: number
  /** how long a refused key is refused without asking again */
  refusedForMs?: number
  /** most keys remembered; the memory starts afresh beyond it */
  maxEntries?: number
}

export const apiKeysFromAuthDefaults = { acceptedForMs: 30_000, refusedForMs: 5_000, maxEntries: 10_000 }

export interface ApiKeysFromAuth {
  /**
   * `revokedBefore(subject)` (ms since the epoch): a remembered answer about a key whose owner's credentials were
   * revoked after it was given is not used; auth is asked again
   */
  verify(key: string, revokedBefore?: (subject: string) => number): Promise<Principal | undefined>
  close(): Promise<void>
}

export function apiKeysFromAuth(options: ApiKeysFromAuthOptions): ApiKeysFromAuth {
  const acceptedForMs = options.acceptedForMs ?? apiKeysFromAuthDefaults.acceptedForMs
  const refusedForMs = options.refusedForMs ?? apiKeysFromAuthDefaults.refusedForMs
  const maxEntries = options.maxEntries ?? apiKeysFromAuthDefaults.maxEntries
  // auth down is 503 for the caller (the key may well be valid), never a refusal
  const auth =
    options.upstream ??
    createUpstreamClient({
      name: 'auth',
      baseUrl: options.authUrl,
      errorCode: 'SERVICE_UNAVAILABLE',
      serviceCredential: options.serviceCredential,
    })
  // keyed by the key's hash: the keys themselves are not kept in memory
  let remembered = new Map<string, { principal: Principal | undefined; at: number; until: number }>()

  return {
    async verify(key, revokedBefore) {
      const id = createHash('sha256').update(key).digest('base64url')
      const known = remembered.get(id)
      const stillTrue =
        known !== undefined &&
        known.until > Date.now() &&
        (known.principal === undefined || known.at >= (revokedBefore?.(known.principal.subject) ?? 0))
      if (stillTrue) return known.principal
      const at = Date.now()
      const { body } = await auth.request<ApiKeyIntrospection>({
        method: 'POST',
        path: '/internal/api-keys/introspect',
        body: { key },
      })
      const principal: Principal | undefined =
        body.active && body.subject !== undefined
          ? {
              subject: body.subject,
              kind: 'user',
              role: body.role ?? '',
              roles: [],
              ...(body.name === undefined ? {} : { name: body.name }),
              ...(body.email === undefined ? {} : { email: body.email }),
              ...(body.emailVerified === undefined ? {} : { emailVerified: body.emailVerified }),
              scopes: body.scopes ?? [],
              method: 'api-key',
              ...(body.apiKeyId === undefined ? {} : { apiKeyId: body.apiKeyId }),
            }
          : undefined
      if (remembered.size >= maxEntries) remembered = new Map()
      remembered.set(id, { principal, at, until: at + (principal ? acceptedForMs : refusedForMs) })
      return principal
    },
    close: () => (options.upstream ? Promise.resolve() : auth.close()),
  }
}

/** Where auth is found in Consul, for the API keys of a service (AuthPluginOptions.apiKeysAtAuth). */
export interface ApiKeysAtAuth extends ApiKeysFromAuthTimings {
  consul: ConsulClientOptions
  /** auth's name in Consul (AUTH_SERVICE_NAME) */
  serviceName: string
  /** how long a key's first introspection waits for Consul's first list of auth instances, ms */
  discoveryWaitMs: number
  /** the services' SERVICE_CREDENTIAL: the introspection is one of auth's /internal/ routes */
  serviceCredential: string
}

/**
 * apiKeysFromAuth over auth found in Consul, what every service but auth accepts keys with. Consul is followed from
 * the first key presented on: a service that never sees one never asks. close() stops the client and the discovery.
 */
export function apiKeysFromDiscoveredAuth(
  options: ApiKeysAtAuth & { logger: RegistryLogger },
): ApiKeysFromAuth {
  const { consul, serviceName, discoveryWaitMs, serviceCredential, logger, ...timings } = options
  let started: { keys: ApiKeysFromAuth; clients: ServiceClient[] } | undefined
  let closed = false
  const start = () => {
    const auth = createDiscoveredUpstream({
      consul,
      name: 'auth',
      serviceName,
      logger,
      discoveryWaitMs,
      // auth misbehaving says nothing about the key: 503 for the caller, never a refusal
      errorCode: ErrorCode.SERVICE_UNAVAILABLE,
      serviceCredential,
    })
    return { keys: apiKeysFromAuth({ upstream: auth.upstream, ...timings }), clients: auth.clients }
  }
  return {
    async verify(key, revokedBefore) {
      // a key presented while the service closes is not refused: nothing is known about it
      if (closed) throw AppError.serviceUnavailable()
      started ??= start()
      return started.keys.verify(key, revokedBefore)
    },
    async close() {
      closed = true
      for (const client of started?.clients ?? []) if ('stop' in client) await client.stop()
    },
  }
}
