// OAuth 2.0 / OpenID Connect in the auth service: oidc-provider mounted at the root, the login and consent pages,
// /userinfo, and the removal of expired provider rows.
//
// Error format: the provider's endpoints answer errors in the OAuth format ({error, error_description}, RFC 6749
// 5.2, OIDC Core 3.1.2.6), or by redirecting with ?error=... to the client. That is the protocol clients implement,
// so these routes deliberately do not use the service's error envelope. The interaction pages are HTML.
// /userinfo is the exception: a resource of the API (spec: bearer token -> claims), it is served by auth's own route
// with the envelope and RFC 6750's WWW-Authenticate challenge, which is what OIDC clients read from it.
//
// JWKS: the provider publishes its keys at /oidc/jwks (its discovery's jwks_uri). /.well-known/jwks.json belongs to
// the access-token routes. Both are built from the same key ring (privateJwks() here, publicJwks() there), so they
// list the same keys, current first.

import type { Sql } from '@meridian/db'
import { ConfigError } from '@meridian/service-kit'
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HTTPMethods,
  onRequestHookHandler,
} from 'fastify'
import type { Redis } from 'ioredis'
import type { AuthConfig } from '../config.ts'
import { createLoginFailureCounters } from '../data/login-failures.ts'
import { deleteExpiredPayloads } from '../data/oidc-payloads.ts'
import { createLoginThrottle } from '../domain/login-throttle.ts'
import type { KeyRing } from '../domain/signing-keys.ts'
import { interactionRoutes } from '../routes/interaction/index.ts'
import { userinfoRoutes } from '../routes/userinfo/index.ts'
import { createAccounts } from './accounts.ts'
import { createOidcProvider, oidcRoutes } from './provider.ts'
import { createProviderHost, type ProviderHost } from './provider-host.ts'
import { createUserinfo } from './userinfo.ts'

export interface OidcPluginOptions {
  config: AuthConfig
  sql: Sql
  /** the login throttle's counters, shared with POST /login */
  redis: Redis
  keyRing: KeyRing
  /** how often expired rows of oidc_payloads are deleted; default 10 minutes */
  cleanupIntervalMs?: number
}

/** a comma-separated list of secrets (only OIDC_COOKIE_KEYS holds several; the others are one) */
const secretsIn = (value: string): string[] =>
  value
    .split(',')
    .map((secret) => secret.trim())
    .filter(Boolean)

/**
 * Every cookie key long enough. (The public development secrets are refused in production when the configuration is
 * loaded: config.ts marks them developmentOnlyDefault.)
 */
export function assertOidcSecretsConfigured(config: AuthConfig): void {
  if (secretsIn(config.OIDC_COOKIE_KEYS).some((key) => key.length < 32)) {
    throw new ConfigError(['OIDC_COOKIE_KEYS: every comma-separated key must have at least 32 characters'])
  }
}

const cors = 'OPTIONS' as const
/** Every method and path the provider serves (oidc-provider's router with the routes of provider.ts), but /userinfo's. */
const providerEndpoints: [HTTPMethods[], string][] = [
  [['GET', 'POST'], oidcRoutes.authorization],
  [['GET'], `${oidcRoutes.authorization}/:uid`],
  [['POST', cors], oidcRoutes.token],
  // GET and POST /userinfo are auth's own route (routes/userinfo); the provider still answers the CORS preflight
  [[cors], oidcRoutes.userinfo],
  [['GET', cors], oidcRoutes.jwks],
  [['GET', cors], '/.well-known/openid-configuration'],
  [['POST', cors], oidcRoutes.revocation],
  [['POST', cors], oidcRoutes.introspection],
  [['GET', 'POST'], oidcRoutes.end_session],
  [['POST'], `${oidcRoutes.end_session}/confirm`],
  [['GET'], `${oidcRoutes.end_session}/success`],
  [['POST', cors], oidcRoutes.device_authorization],
  [['GET', 'POST'], oidcRoutes.code_verification],
  [['GET'], `${oidcRoutes.code_verification}/:uid`],
]

/**
 * The provider builds every URL it advertises or redirects to, and decides its cookies' Secure flag, from the scheme
 * and host of the request (Koa's proxy mode reads them from X-Forwarded-Proto and X-Forwarded-Host). They are set
 * here from the public address (the issuer: the gateway's origin), replacing whatever the client or the gateway
 * sent, so discovery names the public origin even when auth is reached at its internal one, and no client can make
 * it name another. X-Forwarded-For becomes the client address the chassis determined (TRUSTED_PROXIES).
 */
function atPublicAddress(issuer: string): onRequestHookHandler {
  const { protocol, host } = new URL(issuer)
  const scheme = protocol.slice(0, -1)
  return async (request) => {
    const headers = request.raw.headers
    headers['x-forwarded-proto'] = scheme
    headers['x-forwarded-host'] = host
    headers['x-forwarded-for'] = request.ip
  }
}

/**
 * The provider's endpoints as Fastify routes that hand the raw request to the provider's Koa app. The provider reads
 * bodies itself, so in this context no parser consumes the stream: the catch-all parser leaves it unread.
 */
async function providerRoutes(app: FastifyInstance, { host }: { host: ProviderHost }) {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null))

  async function handOver(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.hijack()
    reply.raw.setHeader('x-request-id', String(request.id))
    await host.handler()(request.raw, reply.raw)
  }

  for (const [method, url] of providerEndpoints) {
    // documented by /.well-known/openid-configuration, not by the OpenAPI document
    app.route({ method, url, schema: { hide: true }, handler: handOver })
  }
}

export async function oidcPlugin(app: FastifyInstance, options: OidcPluginOptions): Promise<void> {
  const { config, sql, redis, keyRing } = options
  assertOidcSecretsConfigured(config)
  // the same counters and limits as POST /login: the login form is no way around its throttle
  const throttle = createLoginThrottle({
    counters: createLoginFailureCounters(redis, config.LOGIN_FAILURE_WINDOW_SECONDS),
    maxPerAddress: config.LOGIN_MAX_FAILURES_PER_ADDRESS,
    maxPerAccount: config.LOGIN_MAX_FAILURES_PER_ACCOUNT,
    windowSeconds: config.LOGIN_FAILURE_WINDOW_SECONDS,
  })
  const accounts = createAccounts(sql, throttle)
  const cookieKeys = secretsIn(config.OIDC_COOKIE_KEYS)

  const host = createProviderHost(
    (signingKeys) => {
      const provider = createOidcProvider({
        issuer: config.JWT_ISSUER,
        signingKeys,
        sql,
        accounts,
        clients: config,
        cookieKeys,
        apiAudience: config.JWT_AUDIENCE,
      })
      // Koa would print unhandled errors to stderr; they go to the service log instead, without request bodies
      provider.app.silent = true
      provider.app.on('error', (error: unknown) => app.log.error({ err: error }, 'OpenID provider error'))
      provider.on('server_error', (_ctx: unknown, error: unknown) =>
        app.log.error({ err: error }, 'OpenID provider server error'),
      )
      return provider
    },
    keyRing,
    app.log,
  )

  // the provider's endpoints and pages, answering as the public address whatever address reached them
  await app.register(async (publicAddress) => {
    publicAddress.addHook('onRequest', atPublicAddress(config.JWT_ISSUER))
    await publicAddress.register(providerRoutes, { host })
    await publicAddress.register(interactionRoutes, { host, accounts })
  })
  await app.register(userinfoRoutes, { userinfo: createUserinfo({ host, accounts, clients: config }) })

  // Expired rows are never read (the adapter filters them); this only keeps the table small. Every instance runs
  // it: the deletes are idempotent and cheap on the expires_at index.
  const cleanup = setInterval(
    () => {
      deleteExpiredPayloads(sql)
        .then((count) => {
          if (count > 0) app.log.info({ count }, 'expired OpenID provider rows deleted')
        })
        .catch((error: unknown) =>
          app.log.error({ err: error }, 'deleting expired OpenID provider rows failed'),
        )
    },
    options.cleanupIntervalMs ?? 10 * 60_000,
  )
  cleanup.unref()

  app.addHook('onReady', async () => host.prepare())
  app.addHook('onClose', async () => {
    clearInterval(cleanup)
    host.close()
  })
}
