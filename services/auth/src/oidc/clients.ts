// The OAuth clients Meridian knows: static, from configuration (no dynamic registration), so they need no table.
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
      client_secret: config.OIDC_WEB_CLIENT_SECRET,
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
      client_secret: config.OIDC_MACHINE_CLIENT_SECRET,
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
