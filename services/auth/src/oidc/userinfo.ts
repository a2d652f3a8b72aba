// /userinfo: the claims of the user behind a bearer token, either a Meridian access token (a JWT from POST /login)
// or an access token of the OpenID provider (opaque, from /token), with RFC 6750's challenges on refusal.
import { AppError, ErrorCode } from '@meridian/contracts'
import { authMessages, type Principal } from '@meridian/service-kit'
import type { AccountClaims } from 'oidc-provider'
import { type Accounts, claimsOfScopes, type MeridianUserClaims } from './accounts.ts'
import { type ClientsConfig, isRedirectOrigin, redirectUrisByClient, seededClients } from './clients.ts'
import type { ProviderHost } from './provider-host.ts'

/** The realm of every Bearer challenge auth sends (RFC 6750 3). */
export const bearerRealm = 'meridian'

type BearerError =
  | { error: 'invalid_token'; description: string }
  | { error: 'insufficient_scope'; description: string; scope: string }

/** A WWW-Authenticate value (RFC 6750 3); quotes and backslashes in a value are escaped (RFC 9110 5.6.4). */
function bearerChallenge(problem?: BearerError): string {
  const parameters: [string, string][] = [['realm', bearerRealm]]
  if (problem) {
    parameters.push(['error', problem.error], ['error_description', problem.description])
    if (problem.error === 'insufficient_scope') parameters.push(['scope', problem.scope])
  }
  return `Bearer ${parameters.map(([name, value]) => `${name}="${value.replace(/["\\]/g, '\\$&')}"`).join(', ')}`
}

/** The refusals of /userinfo: the spec's envelope and messages, with the challenge RFC 6750 asks for. */
const userinfoRefusals = {
  /** no Authorization header, or not the Bearer scheme: the challenge carries no error code (RFC 6750 3.1) */
  missingToken: () =>
    new AppError(401, ErrorCode.UNAUTHORIZED, {
      message: authMessages.missingToken,
      headers: { 'www-authenticate': bearerChallenge() },
    }),
  invalidToken: (description: string) =>
    new AppError(401, ErrorCode.UNAUTHORIZED, {
      message: authMessages.invalidToken,
      headers: { 'www-authenticate': bearerChallenge({ error: 'invalid_token', description }) },
    }),
  /** the chassis' INSUFFICIENT_SCOPE, as on every other operation, with the challenge */
  insufficientScope: (description: string, scope: string) =>
    new AppError(403, ErrorCode.INSUFFICIENT_SCOPE, {
      message: AppError.insufficientScope(scope).message,
      headers: { 'www-authenticate': bearerChallenge({ error: 'insufficient_scope', description, scope }) },
    }),
}

/** The Bearer token of an Authorization header; throws `Missing token` without one. */
export function bearerTokenOf(authorization: string | undefined): string {
  const scheme = authorization === undefined ? null : /^bearer\s+/i.exec(authorization)
  const token = scheme ? authorization?.slice(scheme[0].length).trim() : undefined
  if (!token) throw userinfoRefusals.missingToken()
  return token
}

/** A JWS in compact form: three base64url parts. Anything else is taken for one of the provider's tokens. */
const isCompactJwt = (token: string): boolean => token.split('.').length === 3

/**
 * The provider's opaque tokens are base64url ids (43 characters by default); anything else cannot be one, and is
 * refused without a database lookup.
 */
const providerTokenPattern = /^[A-Za-z0-9_-]{16,128}$/

export type UserinfoClaims = AccountClaims & Partial<Pick<MeridianUserClaims, 'role' | 'roles'>>

export interface UserinfoAnswer {
  claims: UserinfoClaims
  /** the OAuth client the token was issued to; absent for a Meridian access token */
  clientId?: string
}

export interface Userinfo {
  /**
   * The claims of the token's user. A Meridian access token is verified by `verifyMeridianToken` (the chassis'
   * app.principalOf); a provider token is looked up in the provider. Throws the refusals above.
   */
  claimsFor(token: string, verifyMeridianToken: () => Promise<Principal>): Promise<UserinfoAnswer>
  /**
   * CORS: whether a browser page on `origin` may read the answer. Browser clients run on the origins of the
   * registered redirect URIs; a provider token's answer only on its own client's (the provider's clientBasedCORS).
   */
  allowsOrigin(origin: string, clientId?: string): boolean
}

export interface UserinfoOptions {
  host: ProviderHost
  accounts: Accounts
  clients: ClientsConfig
}

export function createUserinfo({ host, accounts, clients }: UserinfoOptions): Userinfo {
  const redirectUris = redirectUrisByClient(seededClients(clients))
  const anyRedirectUri = [...redirectUris.values()].flat()

  async function meridianUserClaims(verify: () => Promise<Principal>): Promise<UserinfoAnswer> {
    let principal: Principal
    try {
      principal = await verify()
    } catch (error) {
      // the chassis refuses a bad token with its 401; the challenge is /userinfo's to add (503 and others pass)
      if (error instanceof AppError && error.statusCode === 401) {
        throw userinfoRefusals.invalidToken('the access token is invalid or has expired')
      }
      // a token of the provider for Meridian's APIs granted without `openid` (the route's scope)
      if (error instanceof AppError && error.code === ErrorCode.INSUFFICIENT_SCOPE) {
        throw userinfoRefusals.insufficientScope('the access token lacks the openid scope', 'openid')
      }
      throw error
    }
    const claims = await accounts.meridianClaims(principal.subject)
    if (!claims) throw userinfoRefusals.invalidToken('the user of the access token is not active')
    return { claims }
  }

  /** What the provider's own /userinfo checked (oidc-provider 8, actions/userinfo.js), in the same order. */
  async function providerTokenClaims(value: string): Promise<UserinfoAnswer> {
    if (!providerTokenPattern.test(value)) {
      throw userinfoRefusals.invalidToken('the access token is invalid or has expired')
    }
    const provider = host.current()
    const token = await provider.AccessToken.find(value)
    if (!token) throw userinfoRefusals.invalidToken('the access token is invalid or has expired')
    if (!token.scopes.has('openid')) {
      throw userinfoRefusals.insufficientScope('the access token lacks the openid scope', 'openid')
    }
    // DPoP and mutual TLS are not enabled, so no token should carry a confirmation; one that does cannot be proven here
    if (token.jkt !== undefined || token['x5t#S256'] !== undefined) {
      throw userinfoRefusals.invalidToken('sender-constrained access tokens are not accepted here')
    }
    if (token.aud !== undefined) {
      throw userinfoRefusals.invalidToken('the access token is meant for another resource server')
    }
    if (!(await provider.Client.find(token.clientId))) {
      throw userinfoRefusals.invalidToken('the client of the access token is unknown')
    }
    const account = await accounts.findAccount(token.accountId)
    if (!account) throw userinfoRefusals.invalidToken('the user of the access token is not active')
    const grant = await provider.Grant.find(token.grantId, { ignoreExpiration: true })
    if (
      !grant ||
      grant.isExpired ||
      grant.clientId !== token.clientId ||
      grant.accountId !== token.accountId
    ) {
      throw userinfoRefusals.invalidToken('the grant of the access token is no longer valid')
    }

    // the scopes the token carries and the grant still holds release their claims; claims the user refused do not
    const scopes = grant.getOIDCScopeFiltered(token.scopes).split(' ')
    const refused = new Set(grant.getRejectedOIDCClaims())
    const released = new Set(
      scopes.flatMap((scope) => claimsOfScopes[scope as keyof typeof claimsOfScopes] ?? []),
    )
    const all = await account.claims('userinfo', scopes.join(' '))
    const claims: UserinfoClaims = { sub: all.sub }
    for (const [name, value] of Object.entries(all)) {
      if (name !== 'sub' && released.has(name) && !refused.has(name) && value !== undefined) {
        claims[name] = value
      }
    }
    return { claims, clientId: token.clientId }
  }

  return {
    claimsFor: (token, verifyMeridianToken) =>
      isCompactJwt(token) ? meridianUserClaims(verifyMeridianToken) : providerTokenClaims(token),

    allowsOrigin: (origin, clientId) =>
      isRedirectOrigin(origin, clientId === undefined ? anyRedirectUri : (redirectUris.get(clientId) ?? [])),
  }
}
