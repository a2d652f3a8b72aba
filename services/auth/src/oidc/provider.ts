// The certified OpenID provider (oidc-provider 8) configured for Meridian: which grants, scopes, claims, clients,
// routes and pages; what is stored in PostgreSQL; who the users are.
import type { JsonWebKey } from 'node:crypto'
import { apiScopeNames } from '@meridian/contracts'
import type { Sql } from '@meridian/db'
import Provider, { type ClientMetadataView, errors, type KoaContextWithOIDC } from 'oidc-provider'
import { createPostgresAdapter } from '../data/oidc-payloads.ts'
import {
  deviceSuccessPage,
  errorPage,
  logoutPage,
  pageHeaders,
  signedOutPage,
  userCodeConfirmPage,
  userCodeInputPage,
} from '../views/pages.ts'
import type { Accounts, MeridianUserClaims } from './accounts.ts'
import { claimsOfScopes } from './accounts.ts'
import {
  type ClientsConfig,
  clientSecretsById,
  isOneOfSecrets,
  isRedirectOrigin,
  seededClients,
} from './clients.ts'

/**
 * Where the provider answers, at the root of the auth service. The JWKS is not /.well-known/jwks.json: that path is
 * the access-token key set of the token routes; both publish the same keys (the key ring's), see oidc-plugin.ts.
 */
export const oidcRoutes = {
  authorization: '/authorize',
  token: '/token',
  userinfo: '/userinfo',
  jwks: '/oidc/jwks',
  device_authorization: '/device/auth',
  code_verification: '/device',
  end_session: '/session/end',
  revocation: '/token/revocation',
  introspection: '/token/introspection',
} as const

export const interactionPath = (uid: string): string => `/interaction/${uid}`

/**
 * The resource indicator (RFC 8707) of Meridian's own APIs: a client that asks for it (`resource=` on /authorize and
 * /token) gets an access token the services accept — a JWT signed with the key ring, `aud` the services' audience,
 * the claims of POST /login's tokens (name, email, role, roles), and `scope`: the API scopes asked for and granted,
 * which the token is limited to. Without it, the provider's opaque access token, good for /userinfo only.
 */
export const meridianApiResource = 'urn:meridian:api'

/**
 * The scopes a client may be granted for meridianApiResource: OpenID Connect's identity scopes (/userinfo needs
 * `openid`) and the API's catalogue. Each service refuses a token on an operation whose scope it was not granted;
 * what the token can do is still bounded by the user's role.
 */
const meridianApiScopes = ['openid', 'profile', 'email', 'offline_access', ...apiScopeNames].join(' ')

/** Lifetimes in seconds. ID tokens stay within the key ring's bound (one hour) so a retired key outlives its tokens. */
const ttl = {
  AccessToken: 15 * 60,
  AuthorizationCode: 60,
  ClientCredentials: 15 * 60,
  DeviceCode: 10 * 60,
  IdToken: 60 * 60,
  Interaction: 60 * 60,
  Grant: 14 * 24 * 60 * 60,
  RefreshToken: 14 * 24 * 60 * 60,
  Session: 14 * 24 * 60 * 60,
}

export interface OidcProviderOptions {
  issuer: string
  /** private signing JWKs, the current key first (KeyRing.privateJwks()) */
  signingKeys: JsonWebKey[]
  sql: Sql
  accounts: Accounts
  clients: ClientsConfig
  cookieKeys: string[]
  /** `aud` of the access tokens for meridianApiResource: the services' JWT_AUDIENCE */
  apiAudience: string
}

function setPage(ctx: KoaContextWithOIDC, body: string): void {
  ctx.type = pageHeaders['content-type']
  ctx.body = body
}

/** The name a page shows for the client of the request. */
const clientName = (ctx: KoaContextWithOIDC): string =>
  ctx.oidc.client?.clientName ?? ctx.oidc.client?.clientId ?? 'the application'

/** CORS for browser clients: an origin is allowed when one of the client's redirect URIs lives there. */
function clientBasedCORS(_ctx: KoaContextWithOIDC, origin: string, client: ClientMetadataView): boolean {
  return isRedirectOrigin(origin, (client.redirectUris as string[] | undefined) ?? [])
}

/** The claims a JWT access token for Meridian's APIs adds to the provider's: as POST /login's tokens carry them. */
function apiTokenClaims(claims: MeridianUserClaims) {
  const { name, email, role, roles, email_verified: emailVerified } = claims
  return {
    name,
    email,
    role,
    roles,
    ...(typeof emailVerified === 'boolean' ? { email_verified: emailVerified } : {}),
  }
}

export function createOidcProvider(options: OidcProviderOptions): Provider {
  const provider = new Provider(options.issuer, {
    adapter: (model) => createPostgresAdapter(options.sql, model),
    clients: seededClients(options.clients),
    jwks: { keys: options.signingKeys },
    findAccount: (_ctx, sub) => options.accounts.findAccount(sub),

    // code flow only: implicit and hybrid response types are refused with unsupported_response_type, and there is
    // no password grant in oidc-provider at all
    responseTypes: ['code'],
    // S256 only (plain refused), for every client: confidential ones too (RFC 9700 2.1.1)
    pkce: { methods: ['S256'], required: () => true },
    // redirect_uri always sent and compared exactly with a registered one (the library never matches prefixes)
    allowOmittingSingleRegisteredRedirectUri: false,

    scopes: ['openid', 'offline_access', 'profile', 'email', 'address', 'phone'],
    claims: { ...claimsOfScopes, acr: null, auth_time: null, sid: null, iss: null },
    // The spec's ID token carries sub, name, email, preferred_username: the granted scopes' claims go into the ID
    // token too, not only to /userinfo (OIDC Core 5.4 would keep them for /userinfo when an access token is issued).
    conformIdTokenClaims: false,

    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      deviceFlow: {
        enabled: true,
        // `form` is the provider's own markup (hidden xsrf field, escaped user code)
        userCodeInputSource(ctx: KoaContextWithOIDC, form: string, out?: { error?: string }, error?: Error) {
          const problem = error
            ? 'userCode' in error || error.name === 'NoCodeError'
              ? 'That code is not valid. Check your device and try again.'
              : error.name === 'AbortedError'
                ? 'The sign-in was cancelled.'
                : 'The code could not be processed. Try again.'
            : out?.error
              ? 'The code could not be processed. Try again.'
              : undefined
          setPage(ctx, userCodeInputPage(form, problem))
        },
        userCodeConfirmSource(
          ctx: KoaContextWithOIDC,
          form: string,
          client: ClientMetadataView,
          _deviceInfo: unknown,
          userCode: string,
        ) {
          setPage(ctx, userCodeConfirmPage(form, client.clientName ?? client.clientId, userCode))
        },
        successSource(ctx: KoaContextWithOIDC) {
          setPage(ctx, deviceSuccessPage(clientName(ctx)))
        },
      },
      revocation: { enabled: true },
      introspection: {
        enabled: true,
        // a client learns about its own tokens only (no resource-server clients exist yet to inspect others')
        allowedPolicy: (_ctx: KoaContextWithOIDC, caller: ClientMetadataView, token: { clientId?: string }) =>
          token.clientId === caller.clientId,
      },
      // kept for discovery's userinfo_endpoint and the CORS preflight; GET and POST /userinfo are auth's own route
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource(ctx: KoaContextWithOIDC, form: string) {
          setPage(ctx, logoutPage(form, ctx.host))
        },
        postLogoutSuccessSource(ctx: KoaContextWithOIDC) {
          setPage(ctx, signedOutPage())
        },
      },
      // not offered: no dynamic registration, no pushed requests
      registration: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // only Meridian's APIs: anything else is refused with invalid_target
        defaultResource: (_ctx: KoaContextWithOIDC, _client: unknown, oneOf?: string[]) =>
          oneOf?.[0] ?? undefined,
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx: KoaContextWithOIDC, resource: string) {
          if (resource !== meridianApiResource) throw new errors.InvalidTarget()
          return {
            // what a client may be granted for the APIs: the user's identity (the services read name, email, role)
            // and the API's scopes, which its access token is then limited to (the services enforce them)
            scope: meridianApiScopes,
            audience: options.apiAudience,
            accessTokenTTL: ttl.AccessToken,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          }
        },
      },
    },
    // a JWT access token for Meridian's APIs carries what POST /login's tokens carry, read from the user now:
    // `email_verified` included, whatever the scopes, so that a limit on unverified customers (order's) holds for a
    // third-party client's token as for a first-party one
    async extraTokenClaims(
      _ctx: KoaContextWithOIDC,
      token: { kind: string; accountId?: string; aud?: unknown },
    ) {
      if (token.kind !== 'AccessToken' || token.aud !== options.apiAudience || !token.accountId)
        return undefined
      const claims = await options.accounts.meridianClaims(token.accountId)
      return claims && apiTokenClaims(claims)
    },

    routes: { ...oidcRoutes },
    interactions: { url: (_ctx, interaction) => interactionPath(interaction.uid) },
    clientBasedCORS,

    cookies: {
      keys: options.cookieKeys,
      // Lax: sent on the top-level navigations of the code flow, not on cross-site POSTs (the interaction forms'
      // CSRF defence together with the signed, path-bound interaction cookie)
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    ttl,

    // Errors shown to a browser (a bad authorization request with no safe redirect); JSON clients get the OAuth
    // {error, error_description} body instead.
    renderError(ctx: KoaContextWithOIDC, out) {
      setPage(ctx, errorPage('Sign-in error', out.error_description ?? 'The request was refused.', out.error))
    },
  })
  // The provider takes its scheme and host (endpoint URLs in discovery and redirects, the cookies' Secure flag) from
  // X-Forwarded-Proto and X-Forwarded-Host, which oidc-plugin.ts sets from the issuer on every request it hands over:
  // always the public address, never one a client or the internal hop chose.
  provider.proxy = true
  acceptEverySecret(provider, clientSecretsById(options.clients))
  return provider
}

/**
 * A confidential client authenticates with any secret of its list (OIDC_WEB_CLIENT_SECRET and
 * OIDC_MACHINE_CLIENT_SECRET take up to four), so that its secret can be rotated by rolling restarts
 * (docs/how-to/rotating-secrets.md). oidc-provider compares one secret, in its Client model's compareClientSecret;
 * that method of this provider's own Client class (each provider has its own) compares the list instead.
 */
function acceptEverySecret(provider: Provider, secretsById: ReadonlyMap<string, readonly string[]>): void {
  const model = provider.Client.prototype as unknown as {
    clientId: string
    compareClientSecret(this: { clientId: string }, actual: string): Promise<boolean> | boolean
  }
  const compareOne = model.compareClientSecret
  model.compareClientSecret = function compareClientSecret(actual) {
    const secrets = secretsById.get(this.clientId)
    return secrets && secrets.length > 0 ? isOneOfSecrets(secrets, actual) : compareOne.call(this, actual)
  }
}
