// Who is calling: the Principal every credential becomes, and the resource-level checks made on it.
import { AppError } from '@meridian/contracts'

export interface Principal {
  /** user id; the OAuth client id for a client_credentials token; the owner's user id for an API key */
  subject: string
  kind: 'user' | 'client'
  role: string
  roles: string[]
  name?: string
  email?: string
  /**
   * Whether the user proved their address, as the credential says: a bearer token's `email_verified` (as when it was
   * issued), a cookie session's record (auth rewrites it when the address is verified or changed), auth's answer
   * about an API key's owner (remembered as long as the answer). Absent when the credential does not say (a client's
   * token, a token or session record issued before auth said it).
   */
  emailVerified?: boolean
  /**
   * The scopes the credential is limited to: an API key's, or those of an access token the OpenID provider issued
   * (its space-separated `scope` claim; such a token carries `client_id`). Absent for first-party credentials — POST
   * /login's tokens and cookie sessions — which act with the user's role alone.
   */
  scopes?: string[]
  method: 'bearer' | 'session' | 'api-key'
  /** set when method is 'api-key' */
  apiKeyId?: string
  /**
   * when the credential stops being valid, epoch ms: a bearer token's `exp`, a cookie session's end (its record's
   * expiry in Redis); a connection that outlives it must refresh (a token) or be checked again (a session)
   */
  expiresAt?: number
  /**
   * when the credential was issued, epoch ms: a token's `iat`, a session's `createdAt`. A connection held since
   * compares it with the user's credential revocations as they arrive (a token of the revocation's own second counts
   * as revoked: `iat` is in whole seconds).
   */
  issuedAt?: number
}

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string')

const optionalString = (value: unknown): value is string | undefined =>
  value === undefined || typeof value === 'string'

/**
 * The principal of a verified access token, or undefined when a claim has the wrong type (the token is then refused).
 * A token with a `scope` or `client_id` claim (the OpenID provider's) is limited to its scopes; POST /login's carry
 * neither.
 * `roles` defaults to [] (spec: Token claims); a token without `role` gets '' and so matches no role.
 * Kind: RFC 9068 puts `client_id` in every access token and, for client_credentials, makes `sub` the client itself;
 * so a token is a client's when `client_id` equals `sub`, and a user's otherwise.
 */
export function principalFromClaims(claims: Readonly<Record<string, unknown>>): Principal | undefined {
  const { sub, role = '', roles = [], scope, name, email, client_id: clientId } = claims
  const { email_verified: emailVerified } = claims
  if (typeof sub !== 'string' || sub === '' || typeof role !== 'string' || !isStringArray(roles))
    return undefined
  if (!optionalString(scope) || !optionalString(name) || !optionalString(email) || !optionalString(clientId))
    return undefined
  if (emailVerified !== undefined && typeof emailVerified !== 'boolean') return undefined
  // a token issued to an OAuth client is limited to its scopes, none when it has no `scope` claim
  const limited = scope !== undefined || clientId !== undefined
  return {
    subject: sub,
    kind: clientId === sub ? 'client' : 'user',
    role,
    roles,
    ...(name !== undefined ? { name } : {}),
    ...(email !== undefined ? { email } : {}),
    ...(emailVerified !== undefined ? { emailVerified } : {}),
    ...(limited ? { scopes: scope?.split(' ').filter(Boolean) ?? [] } : {}),
    method: 'bearer',
  }
}

/**
 * True when the principal's credential may act with `scope`: it holds it, or it is not limited to scopes (a
 * first-party credential, which acts with the user's role).
 */
export function holdsScope(principal: Principal, scope: string): boolean {
  return principal.scopes === undefined || principal.scopes.includes(scope)
}

/**
 * Passes when the principal's credential is not limited to scopes, or holds every one of `scopes`; otherwise 403
 * INSUFFICIENT_SCOPE naming the first it lacks. Role and ownership checks come after it: a scope never grants more
 * than the role.
 */
export function assertScopes(principal: Principal, scopes: readonly string[]): void {
  const missing = scopes.find((scope) => !holdsScope(principal, scope))
  if (missing !== undefined) throw AppError.insufficientScope(missing)
}

/**
 * The principal of a request that went through an authentication guard (`app.authenticate` or `requireRole` in its
 * onRequest): a route handler's way to read who calls; a 401 should a route have been registered without its guard.
 */
export function authenticatedPrincipal(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw AppError.unauthorized()
  return request.principal
}

/** True when the principal's `role`, or any of its `roles`, is one of `roles`. */
export function holdsRole(principal: Principal, roles: readonly string[]): boolean {
  return roles.some((role) => role !== '' && (principal.role === role || principal.roles.includes(role)))
}

/**
 * Resource-level check: passes when the principal is the owner (a user whose id is `ownerId`) or holds one of
 * `roles`; 403 otherwise. Without a principal (a route that did not authenticate) it is a 401.
 * A client is never an owner: client ids and user ids are different namespaces.
 */
export function assertOwnerOrRole(principal: Principal | null, ownerId: string, ...roles: string[]): void {
  if (!principal) throw AppError.unauthorized()
  if (principal.kind === 'user' && principal.subject === ownerId) return
  if (holdsRole(principal, roles)) return
  throw AppError.forbidden()
}
