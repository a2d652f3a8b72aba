// The authentication plugin: turns a request's credential (bearer token, API key or session cookie) into a Principal.
import fastifyCookie from '@fastify/cookie'
import { AppError, authNames, SessionRecord } from '@meridian/contracts'
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, preHandlerHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { Value } from 'typebox/value'
import { apiKeyQueryParameters, queryParameterName } from '../logging.ts'
import { declaredScopes, takesCredential } from '../openapi.ts'
import {
  type AccessTokenVerifier,
  createAccessTokenVerifier,
  InvalidTokenError,
  type JwtVerification,
  type TokenClaims,
  type VerifyOptions,
} from './access-token.ts'
import { type ApiKeysAtAuth, apiKeysFromDiscoveredAuth } from './api-keys-from-auth.ts'
import { type CredentialRevocations, followCredentialRevocations } from './credential-revocations.ts'
import { JwksUnavailableError } from './jwks-key-source.ts'
import { assertScopes, holdsRole, type Principal, principalFromClaims } from './principal.ts'

export interface AuthPluginOptions {
  jwt: JwtVerification
  issuer: string
  audience: string
  /** cookie sessions: the session id cookie (authNames.sessionCookie) is looked up at authNames.sessionKeyPrefix + id in this Redis */
  sessions?: { redis: Redis }
  /**
   * API keys (header authNames.apiKeyHeader only): resolves a presented key to its principal, undefined when
   * unknown/revoked. A verifier that remembers answers must not use one given before `revokedBefore(owner)`: the
   * key's owner lost rights since.
   */
  apiKeys?: {
    verify(key: string, revokedBefore: (subject: string) => number): Promise<Principal | undefined>
  }
  /**
   * Without `apiKeys`: API keys are introspected at auth, found in Consul under this name when the first key is
   * presented (apiKeysFromDiscoveredAuth; answers remembered and revoked as apiKeysFromAuth's). authOptionsFromEnv
   * sets it from AUTH_SERVICE_NAME.
   */
  apiKeysAtAuth?: ApiKeysAtAuth
  /**
   * auth's credential revocations (authNames.revocationKeyPrefix / revocationChannel) followed in this Redis: a
   * suspended, demoted or deleted user's tokens, sessions and API keys stop working at once. Without it, a token
   * stays valid until it expires.
   */
  revocations?: { redis: Redis }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** preHandler: requires a principal (401 otherwise) */
    authenticate: preHandlerHookHandler
    /** preHandler: requires a principal with one of these roles (`role` or any of `roles`), 401 without one, 403 otherwise */
    requireRole(...roles: string[]): preHandlerHookHandler
    /** the request's principal, read from its credential once (401 when there is none or it is bad) */
    principalOf(request: FastifyRequest): Promise<Principal>
    /** the revocations this service follows (AuthPluginOptions.revocations); none revoked without them */
    credentialRevocations: CredentialRevocations
    /**
     * The principal of a credential presented outside a request's own headers (a WebSocket handshake's `auth.token`,
     * the session cookie of an upgrade): the same checks and errors (401 with authMessages) as a request's.
     */
    verifyCredential(credential: PresentedCredential, log: FastifyBaseLogger): Promise<Principal>
  }
  interface FastifyRequest {
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /**
     * The route reads its credential itself, through app.principalOf where it is the chassis' (/userinfo also takes
     * the OpenID provider's opaque tokens): the early scope check of onRequest leaves it alone.
     */
    readsOwnCredential?: boolean
  }
}

/** A credential as presented, its kind known. */
export type PresentedCredential =
  | { kind: 'bearer'; token: string }
  | { kind: 'session'; sessionId: string }
  | { kind: 'api-key'; key: string }

/** The spec's messages (Authentication); a credential that is present but bad never falls through to the next. */
export const authMessages = {
  missingToken: 'Missing token',
  invalidToken: 'Invalid or expired token',
  invalidSession: 'Invalid session',
  invalidApiKey: 'Invalid API key',
  apiKeyInQuery: 'API keys are accepted only in the X-API-Key header',
} as const

const maxSessionIdLength = 256

/**
 * Every API-key parameter name holds a 'k', which a name can only decode to from a 'k', a 'K' or a percent-escape
 * (a URL's characters are bytes, so no other character lower-cases to 'k'): a query without any of them names none.
 */
const mayNameApiKey = /[%Kk]/

/** True when the URL's query names an API-key parameter (any case, percent-encoded or not). */
export function hasApiKeyInQuery(url: string): boolean {
  const queryStart = url.indexOf('?')
  if (queryStart === -1) return false
  const query = url.slice(queryStart + 1)
  // checked on every request: most queries (?page=2&limit=20) are passed over without splitting or decoding them
  if (!mayNameApiKey.test(query)) return false
  return query.split('&').some((pair) => {
    const separator = pair.indexOf('=')
    return apiKeyQueryParameters.has(queryParameterName(separator === -1 ? pair : pair.slice(0, separator)))
  })
}

async function authPluginImpl(app: FastifyInstance, options: AuthPluginOptions): Promise<void> {
  if (!options.issuer || !options.audience) throw new Error('auth: issuer and audience are required')
  if (!app.hasPlugin('@fastify/cookie')) await app.register(fastifyCookie)
  const accessTokens = await createAccessTokenVerifier(app, options)
  const revocations = options.revocations
    ? await followCredentialRevocations({ redis: options.revocations.redis, logger: app.log })
    : noRevocations
  app.addHook('onClose', () => revocations.close())
  app.decorate('credentialRevocations', revocations)

  app.decorateRequest('principal', null)

  // On every route, with or without authentication: the key has leaked into logs and history, so it is refused
  // (and logging.ts masks it in the logged URL).
  // (a callback hook: this runs on every request, and should not cost a promise)
  app.addHook('onRequest', (request, _reply, done) => {
    done(hasApiKeyInQuery(request.url) ? AppError.unauthorized(authMessages.apiKeyInQuery) : undefined)
  })

  const atAuth =
    options.apiKeys === undefined && options.apiKeysAtAuth
      ? apiKeysFromDiscoveredAuth({ ...options.apiKeysAtAuth, logger: app.log })
      : undefined
  if (atAuth) app.addHook('onClose', () => atAuth.close())
  const apiKeys = options.apiKeys ?? atAuth
  const credentialOptions: AuthPluginOptions = { ...options, ...(apiKeys ? { apiKeys } : {}) }

  // A route that takes a credential declares the scope it needs (security.requires): checked below for every
  // credential limited to scopes, so a route cannot document one scope and enforce another, or none.
  app.addHook('onRoute', (route) => {
    const { security } = (route.schema ?? {}) as { security?: unknown }
    if (takesCredential(security) && declaredScopes(security).scopes.length === 0) {
      throw new Error(
        `${String(route.method)} ${route.url} takes a credential but declares no scope: use security.requires(scope)`,
      )
    }
  })

  app.decorateRequest(scopesHeldBy, null)

  /**
   * Reads the request's credential once (later checks of the same request reuse the principal), and checks it holds
   * the scopes the route declares.
   */
  async function principalOf(request: FastifyRequest): Promise<Principal> {
    const checked = checkedPrincipalOf(request)
    if (checked !== undefined) return checked
    request.principal ??= await readCredential(request, accessTokens, revocations, credentialOptions)
    assertScopes(request.principal, declaredScopes(request.routeOptions.schema?.security).scopes)
    ;(request as CheckedRequest)[scopesHeldBy] = request.principal
    return request.principal
  }

  // Where a route requires a credential and one is sent, it is read and its scope checked first, before validation
  // and before any guard or handler: a credential without the route's scope changes nothing and learns nothing.
  // A WebSocket upgrade is left to its connection, whose protocol reads the credential (perhaps one sent only once
  // connected) and answers in its own terms; principalOf checks the route's scope then.
  // (a callback hook: it runs on every request, and should cost a promise only where a credential is read)
  app.addHook('onRequest', (request, _reply, done) => {
    // Fastify makes a new object on each read of routeOptions
    const routeOptions = request.routeOptions
    const route = declaredScopes(routeOptions.schema?.security)
    const early =
      route.scopes.length > 0 &&
      !route.optional &&
      !routeOptions.config.readsOwnCredential &&
      !isWebSocketUpgrade(request)
    if (!early || !presentsCredential(request, options)) {
      done()
      return
    }
    principalOf(request).then(() => done(), done)
  })

  // callback hooks: a request's second and third guard (the early check, authenticate, requireRole) find its principal
  // checked already, and cost no promise
  const authenticate: preHandlerHookHandler = (request, _reply, done) => {
    if (checkedPrincipalOf(request) !== undefined) return done()
    principalOf(request).then(() => done(), done)
  }
  app.decorate('authenticate', authenticate)
  app.decorate('principalOf', principalOf)
  app.decorate('verifyCredential', (credential: PresentedCredential, log: FastifyBaseLogger) => {
    switch (credential.kind) {
      case 'bearer':
        // verified once for a whole connection, which keeps the principal: not worth a place in the token cache
        return tokenPrincipal(credential.token, accessTokens, revocations, { remember: false })
      case 'session':
        if (!options.sessions) return Promise.reject(AppError.unauthorized(authMessages.invalidSession))
        return sessionPrincipal(credential.sessionId, options.sessions.redis, revocations, log)
      case 'api-key':
        return apiKeyPrincipal(credential.key, apiKeys, revocations)
    }
  })
  app.decorate('requireRole', (...roles: string[]): preHandlerHookHandler => {
    const roleHeld = (principal: Principal) =>
      holdsRole(principal, roles) ? undefined : AppError.forbidden()
    return (request, _reply, done) => {
      const checked = checkedPrincipalOf(request)
      if (checked !== undefined) return done(roleHeld(checked))
      principalOf(request).then((principal) => done(roleHeld(principal)), done)
    }
  })
}

/** Where a request keeps the principal whose scopes were checked for its route (a request decorator). */
const scopesHeldBy = Symbol('meridian.scopesHeldBy')

type CheckedRequest = FastifyRequest & { [scopesHeldBy]: Principal | null }

/** The request's principal when it was read and its scopes checked already, for this very principal. */
function checkedPrincipalOf(request: FastifyRequest): Principal | undefined {
  const { principal } = request
  return principal !== null && (request as CheckedRequest)[scopesHeldBy] === principal ? principal : undefined
}

const noRevocations: CredentialRevocations = {
  revokedBefore: () => 0,
  apply: () => {},
  onRevoked: () => () => {},
  onSessionEnded: () => () => {},
  close: async () => {},
}

const isWebSocketUpgrade = (request: FastifyRequest) => request.headers.upgrade?.toLowerCase() === 'websocket'

/** Whether the request carries a credential readCredential would read (an anonymous one is the route's to refuse). */
function presentsCredential(request: FastifyRequest, options: AuthPluginOptions): boolean {
  return (
    request.headers.authorization !== undefined ||
    request.headers[authNames.apiKeyHeader] !== undefined ||
    (options.sessions !== undefined && request.cookies?.[authNames.sessionCookie] !== undefined)
  )
}

/** Order: Authorization header, then the X-API-Key header, then the session cookie. */
async function readCredential(
  request: FastifyRequest,
  accessTokens: AccessTokenVerifier,
  revocations: CredentialRevocations,
  options: AuthPluginOptions,
): Promise<Principal> {
  const { authorization } = request.headers
  if (authorization !== undefined) return bearerPrincipal(authorization, accessTokens, revocations)
  const apiKey = request.headers[authNames.apiKeyHeader]
  if (apiKey !== undefined) return apiKeyPrincipal(String(apiKey), options.apiKeys, revocations)
  const sessionId = options.sessions ? request.cookies?.[authNames.sessionCookie] : undefined
  if (sessionId !== undefined && options.sessions)
    return sessionPrincipal(sessionId, options.sessions.redis, revocations, request.log)
  throw AppError.unauthorized(authMessages.missingToken)
}

/** The scheme and the spaces after it; the token is the rest (matched apart: a pattern over it reads it all). */
const bearerScheme = /^bearer\s+/i

async function bearerPrincipal(
  authorization: string,
  accessTokens: AccessTokenVerifier,
  revocations: CredentialRevocations,
): Promise<Principal> {
  const scheme = bearerScheme.exec(authorization)
  const token = scheme ? authorization.slice(scheme[0].length).trim() : undefined
  if (!token) throw AppError.unauthorized(authMessages.missingToken)
  return tokenPrincipal(token, accessTokens, revocations)
}

async function tokenPrincipal(
  token: string,
  accessTokens: AccessTokenVerifier,
  revocations: CredentialRevocations,
  verifyOptions?: VerifyOptions,
): Promise<Principal> {
  let claims: TokenClaims
  try {
    claims = await accessTokens.verify(token, verifyOptions)
  } catch (error) {
    if (error instanceof InvalidTokenError) throw AppError.unauthorized(authMessages.invalidToken)
    if (error instanceof JwksUnavailableError) throw AppError.serviceUnavailable()
    throw error
  }
  const principal = tokenPrincipals.get(claims) ?? principalOfClaims(claims)
  // iat is in seconds: a token of the revocation's own second counts as issued before it (auth waits for the
  // next second before issuing that user a new one)
  if ((principal.issuedAt ?? 0) < revocations.revokedBefore(principal.subject)) {
    throw AppError.unauthorized(authMessages.invalidToken)
  }
  return principal
}

/**
 * The principal of each verified token's claims (frozen, as the claims are): a client sends the same token with every
 * request, and the verifier answers the same claims object for it while it remembers the token.
 */
const tokenPrincipals = new WeakMap<TokenClaims, Principal>()

function principalOfClaims(claims: TokenClaims): Principal {
  const principal = principalFromClaims(claims)
  if (!principal) throw AppError.unauthorized(authMessages.invalidToken)
  const complete: Principal = Object.freeze({
    ...principal,
    ...(typeof claims.exp === 'number' ? { expiresAt: claims.exp * 1000 } : {}),
    ...(typeof claims.iat === 'number' ? { issuedAt: claims.iat * 1000 } : {}),
  })
  tokenPrincipals.set(claims, complete)
  return complete
}

async function apiKeyPrincipal(
  key: string,
  apiKeys: AuthPluginOptions['apiKeys'],
  revocations: CredentialRevocations,
): Promise<Principal> {
  // a service without API keys refuses one rather than ignoring it: the caller meant it as its credential
  const principal = key && apiKeys ? await apiKeys.verify(key, revocations.revokedBefore) : undefined
  if (!principal) throw AppError.unauthorized(authMessages.invalidApiKey)
  return { ...principal, method: 'api-key' }
}

async function sessionPrincipal(
  sessionId: string,
  redis: Redis,
  revocations: CredentialRevocations,
  log: FastifyBaseLogger,
): Promise<Principal> {
  if (sessionId === '' || sessionId.length > maxSessionIdLength) {
    throw AppError.unauthorized(authMessages.invalidSession)
  }
  const key = `${authNames.sessionKeyPrefix}${sessionId}`
  let stored: string | null
  let ttlMs: number
  try {
    // the record and its time left, in one round trip: the session ends when its key expires
    const [[getError, value] = [], [ttlError, ttl] = []] =
      (await redis.pipeline().get(key).pttl(key).exec()) ?? []
    if (getError || ttlError) throw getError ?? ttlError
    stored = value as string | null
    ttlMs = Number(ttl)
  } catch (error) {
    log.warn({ err: error }, 'session store unavailable')
    throw AppError.serviceUnavailable()
  }
  // -2: the key expired between the two commands
  if (stored === null || ttlMs === -2) throw AppError.unauthorized(authMessages.invalidSession)
  const record = parseSessionRecord(stored)
  if (!record) {
    log.warn('malformed session record; the session is refused')
    throw AppError.unauthorized(authMessages.invalidSession)
  }
  const issuedAt = Date.parse(record.createdAt)
  if (issuedAt < revocations.revokedBefore(record.userId)) {
    throw AppError.unauthorized(authMessages.invalidSession)
  }
  // a session is first-party: no scopes, the user's role alone
  return {
    subject: record.userId,
    kind: 'user',
    role: record.role,
    roles: [],
    ...(record.emailVerified === undefined ? {} : { emailVerified: record.emailVerified }),
    method: 'session',
    issuedAt,
    // -1: a key without expiry (auth always sets one), a session without end
    ...(ttlMs >= 0 ? { expiresAt: Date.now() + ttlMs } : {}),
  }
}

function parseSessionRecord(stored: string): SessionRecord | undefined {
  try {
    const parsed: unknown = JSON.parse(stored)
    return Value.Check(SessionRecord, parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

export const authPlugin = fp(authPluginImpl, {
  name: '@meridian/service-kit/auth',
  fastify: '5.x',
})
