// Who is signed in: an access token held in memory only (spec: never in local storage), from the login form
// (POST /login) or from Meridian's OpenID Connect provider (authorization code with PKCE, the public client
// `meridian-spa`, through oauth4webapi). Reloading the page signs in again; the provider's own session makes the
// PKCE round trip a redirect without a form.
import type { ApiScope, TokenPair, User } from '@meridian/contracts'
import * as oauth from 'oauth4webapi'
import { api } from './api.ts'

export interface SignedInUser {
  id: string
  name: string
  email: string
  role: string
}

export interface Session {
  token: string
  user: SignedInUser
}

/** The claims of an access token, read (not verified: every service verifies it). */
export function userOfToken(token: string): SignedInUser {
  const payload = token.split('.')[1]
  if (!payload) throw new Error('not a JWT')
  const json = atob(payload.replaceAll('-', '+').replaceAll('_', '/'))
  const claims = JSON.parse(decodeURIComponent(escape(json))) as Record<string, unknown>
  const text = (value: unknown) => (typeof value === 'string' ? value : '')
  return { id: text(claims.sub), name: text(claims.name), email: text(claims.email), role: text(claims.role) }
}

export async function signInWithPassword(email: string, password: string): Promise<Session> {
  const pair = await api<TokenPair>('POST', '/login', { body: { email, password } })
  return { token: pair.accessToken, user: userOfToken(pair.accessToken) }
}

/** Open registration (POST /api/v1/users makes a customer), then signing in with the same email and password. */
export async function registerAndSignIn(name: string, email: string, password: string): Promise<Session> {
  await api<User>('POST', '/api/v1/users', { body: { name, email, password } })
  return signInWithPassword(email, password)
}

const client: oauth.Client = { client_id: 'meridian-spa' }
/** auth's resource indicator of Meridian's APIs: the access token is then a JWT every service accepts */
const apiResource = 'urn:meridian:api'
/**
 * The API scopes the console's views use (docs/explanation/security.md: API scopes): the provider's token is limited to them, and each
 * service refuses it elsewhere (403 INSUFFICIENT_SCOPE). What the signed-in user may do is still their role's.
 */
export const consoleApiScopes: readonly ApiScope[] = [
  // the Account view reads the user themself (GET /api/v1/users/{id}) and asks to change their address
  // (POST /api/v1/users/{id}/email-change)
  'users:read',
  'users:write',
  'orders:read',
  'orders:write',
  'notifications:read',
  'notifications:write',
  'chat:read',
  'chat:write',
  'documents:read',
  'documents:write',
  'posts:read',
  'posts:write',
  'admin:read',
  'admin:write',
]
const pendingKey = 'meridian-console-pkce'
const redirectUri = () => `${location.origin}${import.meta.env.BASE_URL}`

/**
 * The provider as this page reaches it: its metadata read through the gateway, its endpoints on this page's own
 * origin. The provider advertises them on its public address (JWT_ISSUER, the gateway's), which is this origin when
 * the gateway serves the console; the development server (Vite, proxying to the gateway) is another origin, and the
 * provider's cookies must stay on the one the browser uses.
 */
async function authorizationServer(): Promise<oauth.AuthorizationServer> {
  const metadata = await api<oauth.AuthorizationServer>('GET', '/.well-known/openid-configuration')
  return {
    ...metadata,
    authorization_endpoint: `${location.origin}/authorize`,
    token_endpoint: `${location.origin}/token`,
  }
}

/** Sends the browser to the provider's sign-in; it comes back to the console with a code. */
export async function startOpenIdSignIn(): Promise<void> {
  const server = await authorizationServer()
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  // the verifier must survive the redirect: it stays in this tab only, and is removed on return
  sessionStorage.setItem(pendingKey, JSON.stringify({ verifier, state }))
  const url = new URL(server.authorization_endpoint!)
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: ['openid', 'profile', 'email', ...consoleApiScopes].join(' '),
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    resource: apiResource,
  }).toString()
  location.assign(url)
}

/** When the page is the provider's redirect back (?code=…&state=…), exchanges the code; otherwise undefined. */
export async function completeOpenIdSignIn(): Promise<Session | undefined> {
  const current = new URL(location.href)
  if (!current.searchParams.has('code') && !current.searchParams.has('error')) return undefined
  const pending = sessionStorage.getItem(pendingKey)
  sessionStorage.removeItem(pendingKey)
  history.replaceState(null, '', `${redirectUri()}${location.hash}`)
  if (!pending) throw new Error('The sign-in was not started from this tab: start it again')
  const { verifier, state } = JSON.parse(pending) as { verifier: string; state: string }
  const server = await authorizationServer()
  const parameters = oauth.validateAuthResponse(server, client, current, state)
  const response = await oauth.authorizationCodeGrantRequest(
    server,
    client,
    oauth.None(),
    parameters,
    redirectUri(),
    verifier,
    {
      additionalParameters: { resource: apiResource },
      // the provider is reached over plain HTTP in development and tests
      [oauth.allowInsecureRequests]: location.protocol === 'http:',
    },
  )
  const tokens = await oauth.processAuthorizationCodeResponse(server, client, response)
  return { token: tokens.access_token, user: userOfToken(tokens.access_token) }
}
