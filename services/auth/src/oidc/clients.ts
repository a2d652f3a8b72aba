// The OAuth clients Meridian knows: static, from configuration (no dynamic registration), so they need no table.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { ClientMetadata } from 'oidc-provider'
import type { AuthConfig } from '../config.ts'

export type ClientsConfig = Pick<
  AuthConfig,
  | 'OIDC_SPA_REDIRECT_URIS'
  | 'OIDC_WEB_REDIRECT_URIS'
  | 'OIDC_WEB_CLIENT_SECRET'
  | 'OIDC_MACHINE_CLIENT_SECRET'
>

const list = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

/** The first of a comma-separated list of client secrets: the client's own (what a symmetric key would derive from). */
const firstSecret = (value: string): string => list(value)[0] ?? ''

/** Each confidential client's accepted secrets (OIDC_*_CLIENT_SECRET: up to four, comma-separated), by client id. */
export const clientSecretsById = (config: ClientsConfig): Map<string, string[]> =>
  new Map([
    ['meridian-web', list(config.OIDC_WEB_CLIENT_SECRET)],
    ['meridian-machine', list(config.OIDC_MACHINE_CLIENT_SECRET)],
  ])

const digestOf = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest()

/**
 * Whether `presented` is one of `secrets`: SHA-256 digests compared with timingSafeEqual, every one of them, so
 * neither the answer's time nor an early exit tells how much of a secret was right, or which.
 */
export function isOneOfSecrets(secrets: readonly string[], presented: string): boolean {
  const digest = digestOf(presented)
  let matched = false
  for (const secret of secrets) matched = timingSafeEqual(digest, digestOf(secret)) || matched
  return matched
}

const userScopes = 'openid offline_access profile email address phone'

export function seededClients(config: ClientsConfig): ClientMetadata[] {
  return [
    {
      // a browser app: no secret it could keep, so PKCE (S256) is what binds the code to it
      client_id: 'meridian-spa',
      client_name: 'Meridian web app',
      application_type: 'web',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: list(config.OIDC_SPA_REDIRECT_URIS),
      scope: userScopes,
    },
    {
      client_id: 'meridian-web',
      client_name: 'Meridian server-rendered site',
      client_secret: firstSecret(config.OIDC_WEB_CLIENT_SECRET),
      application_type: 'web',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: list(config.OIDC_WEB_REDIRECT_URIS),
      scope: userScopes,
    },
    {
      // machine to machine: no user, no redirect, no ID token
      client_id: 'meridian-machine',
      client_name: 'Meridian machine client',
      client_secret: firstSecret(config.OIDC_MACHINE_CLIENT_SECRET),
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
    },
    {
      // a TV or CLI: a public client (its binary is not a place for secrets); the user confirms on another screen
      client_id: 'meridian-device',
      client_name: 'Meridian device',
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
      response_types: [],
      redirect_uris: [],
      scope: userScopes,
    },
  ]
}

/** The origin of a URI, or undefined when it is not an absolute URL. */
function originOf(uri: string): string | undefined {
  try {
    return new URL(uri).origin
  } catch {
    return undefined
  }
}

/**
 * True when the origin is where one of these redirect URIs lives: a browser client's code runs on the origin it is
 * redirected back to, so that is the origin allowed to call /userinfo and the provider's endpoints with its tokens
 * (CORS).
 */
export const isRedirectOrigin = (origin: string, redirectUris: readonly string[]): boolean =>
  redirectUris.some((uri) => originOf(uri) === origin)

/** Each client's redirect URIs by client id (clients are static, so this is read once). */
export const redirectUrisByClient = (clients: readonly ClientMetadata[]): Map<string, string[]> =>
  new Map(clients.map((client) => [client.client_id, client.redirect_uris ?? []]))
