// Types for the part of oidc-provider 8 this service uses (the package ships none, and @types/oidc-provider is not a
// dependency). Kept to what src/oidc calls; widen it here when more of the library is needed.
declare module 'oidc-provider' {
  import type { JsonWebKey } from 'node:crypto'
  import type { EventEmitter } from 'node:events'
  import type { IncomingMessage, ServerResponse } from 'node:http'

  export interface AdapterPayload {
    [key: string]: unknown
    grantId?: string
    userCode?: string
    uid?: string
    consumed?: number
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>
    find(id: string): Promise<AdapterPayload | undefined>
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>
    findByUid(uid: string): Promise<AdapterPayload | undefined>
    consume(id: string): Promise<void>
    destroy(id: string): Promise<void>
    revokeByGrantId(grantId: string): Promise<void>
  }

  export type AccountClaims = { sub: string; [claim: string]: unknown }

  export interface Account {
    accountId: string
    claims(use: 'id_token' | 'userinfo', scope: string): Promise<AccountClaims> | AccountClaims
  }

  /** The Koa context with the provider's `oidc` property, as far as configuration callbacks read it. */
  export interface KoaContextWithOIDC {
    body: unknown
    type: string
    status: number
    host: string
    oidc: {
      client?: ClientMetadataView
      route: string
      params?: Record<string, unknown>
      session?: unknown
      [key: string]: unknown
    }
  }

  export interface ClientMetadata {
    client_id: string
    client_secret?: string
    client_name?: string
    application_type?: 'web' | 'native'
    grant_types?: string[]
    response_types?: string[]
    redirect_uris?: string[]
    post_logout_redirect_uris?: string[]
    token_endpoint_auth_method?: string
    scope?: string
    [key: string]: unknown
  }

  /** A client as the provider exposes it (camelCased metadata). */
  export interface ClientMetadataView {
    clientId: string
    clientName?: string
    clientAuthMethod: string
    [key: string]: unknown
  }

  export interface ErrorOut {
    error: string
    error_description?: string
    [key: string]: unknown
  }

  export interface Configuration {
    adapter?: (model: string) => Adapter
    clients?: ClientMetadata[]
    claims?: Record<string, null | string[]>
    scopes?: string[]
    responseTypes?: string[]
    grantTypes?: string[]
    conformIdTokenClaims?: boolean
    allowOmittingSingleRegisteredRedirectUri?: boolean
    clientBasedCORS?: (ctx: KoaContextWithOIDC, origin: string, client: ClientMetadataView) => boolean
    cookies?: {
      names?: Record<string, string>
      long?: Record<string, unknown>
      short?: Record<string, unknown>
      keys?: string[]
    }
    features?: Record<string, Record<string, unknown>>
    findAccount?: (
      ctx: KoaContextWithOIDC,
      sub: string,
      token?: unknown,
    ) => Promise<Account | undefined> | Account | undefined
    interactions?: {
      url?: (ctx: KoaContextWithOIDC, interaction: Interaction) => string
      policy?: unknown
    }
    jwks?: { keys: JsonWebKey[] }
    pkce?: {
      methods?: string[]
      required?: (ctx: KoaContextWithOIDC, client: ClientMetadataView) => boolean
    }
    renderError?: (ctx: KoaContextWithOIDC, out: ErrorOut, error: Error) => Promise<void> | void
    routes?: Record<string, string>
    ttl?: Record<string, number | ((...args: never[]) => number)>
    rotateRefreshToken?: boolean | ((ctx: KoaContextWithOIDC) => boolean)
    revokeGrantPolicy?: (ctx: KoaContextWithOIDC) => boolean
    issueRefreshToken?: (
      ctx: KoaContextWithOIDC,
      client: unknown,
      code: unknown,
    ) => Promise<boolean> | boolean
    [key: string]: unknown
  }

  export interface PromptDetail {
    name: string
    reasons: string[]
    details: {
      missingOIDCScope?: string[]
      missingOIDCClaims?: string[]
      missingResourceScopes?: Record<string, string[]>
      [key: string]: unknown
    }
  }

  export interface Interaction {
    uid: string
    jti: string
    exp: number
    prompt: PromptDetail
    params: Record<string, unknown> & { client_id?: string; scope?: string }
    session?: { accountId?: string; uid?: string; cookie?: string }
    grantId?: string
    returnTo: string
    deviceCode?: string
  }

  export type InteractionResults =
    | {
        login?: { accountId: string; remember?: boolean; amr?: string[]; acr?: string; ts?: number }
        consent?: { grantId?: string }
        [key: string]: unknown
      }
    | { error: string; error_description?: string }

  export class Grant {
    constructor(properties?: { accountId?: string; clientId?: string })
    jti: string
    accountId?: string
    clientId?: string
    readonly isExpired: boolean
    addOIDCScope(scope: string): void
    addOIDCClaims(claims: string[]): void
    addResourceScope(resource: string, scope: string): void
    /** the granted OpenID scopes (consent given, not rejected) among `filter`, space-separated */
    getOIDCScopeFiltered(filter: Set<string>): string
    getRejectedOIDCClaims(): string[]
    save(ttlSeconds?: number): Promise<string>
    static find(id: string, options?: { ignoreExpiration?: boolean }): Promise<Grant | undefined>
  }

  /** An access token issued by the provider (opaque: its value is its id in the adapter). */
  export class AccessToken {
    jti: string
    accountId: string
    clientId: string
    grantId: string
    scope?: string
    /** set when the token is bound to a resource server (resource indicators) */
    aud?: string | string[]
    /** sender-constraining confirmations (DPoP, mutual TLS) */
    jkt?: string
    'x5t#S256'?: string
    exp: number
    readonly scopes: Set<string>
    readonly isExpired: boolean
    /** the stored token when it exists, has not expired and its session still holds it; undefined otherwise */
    static find(value: string): Promise<AccessToken | undefined>
  }

  export class Client {
    clientId: string
    clientName?: string
    static find(id: string): Promise<Client | undefined>
  }

  export class Provider extends EventEmitter {
    constructor(issuer: string, configuration?: Configuration)
    readonly issuer: string
    proxy: boolean
    readonly app: EventEmitter & { silent?: boolean }
    readonly Grant: typeof Grant
    readonly AccessToken: typeof AccessToken
    readonly Client: typeof Client
    callback(): (request: IncomingMessage, response: ServerResponse) => Promise<void>
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<Interaction>
    interactionResult(
      request: IncomingMessage,
      response: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>
    interactionFinished(
      request: IncomingMessage,
      response: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>
  }

  export class OIDCProviderError extends Error {
    status: number
    statusCode: number
    error: string
    error_description?: string
    expose: boolean
  }

  export const errors: {
    OIDCProviderError: typeof OIDCProviderError
    SessionNotFound: typeof OIDCProviderError
    InvalidRequest: typeof OIDCProviderError
    AccessDenied: typeof OIDCProviderError
    InvalidTarget: typeof OIDCProviderError
  }

  export default Provider
}
