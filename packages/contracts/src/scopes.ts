// The scopes of Meridian's API: what an API key or an OAuth access token may be limited to, per resource and access.
import { type Static, Type } from 'typebox'

/**
 * The scope catalogue: `<resource>:read` and `<resource>:write` for each resource a credential can reach, and
 * `admin:read` / `admin:write` for operators' views and actions. Every operation that takes a credential names one
 * (service-kit's `security.requires`); a credential limited to scopes (an API key, an access token of the OpenID
 * provider) is refused with 403 INSUFFICIENT_SCOPE where it lacks it. A scope never grants more than the role of the
 * user behind the credential: role and ownership checks apply after it.
 */
export const apiScopes = {
  'users:read': 'Read users: yourself, or every user as an admin',
  'users:write':
    "Register users; change or remove your own account and password (another user's, or a role or status, also need admin:write)",
  'api-keys:read': 'List API keys',
  'api-keys:write':
    'Create and revoke API keys, with no scope beyond those granted here (an API key never creates one)',
  'orders:read': 'Read orders',
  'orders:write': 'Place and cancel orders',
  'payments:read': 'Read payments',
  'payments:write': 'Make payments',
  'products:write': 'Add and change products and adjust their stock (admins; reading the catalogue is open)',
  'shipments:read': 'Read shipments',
  'shipments:write': 'Mark shipments delivered (admins)',
  'notifications:read': 'Read notifications',
  'notifications:write': 'Mark notifications read',
  'chat:read': 'Read chat rooms and their messages',
  'chat:write': 'Send chat messages; create chat rooms and manage their members',
  'documents:read': 'Read collaborative documents',
  'documents:write': 'Edit collaborative documents; create and remove them and manage their members',
  'posts:read': 'Read posts and their authors (GraphQL queries and subscriptions)',
  'posts:write': 'Publish posts (GraphQL mutation createPost)',
  'admin:read':
    "Operators' views: order sagas, routed services, dead letters, the realtime dashboard and connections",
  'admin:write':
    "Operators' actions: retry or compensate sagas, maintenance switches, dead-letter replays, realtime disconnections and global alerts; other users' accounts (changes, removal, passwords) and any role or status",
} as const

export type ApiScope = keyof typeof apiScopes

/** Every scope of the catalogue, in its order. */
export const apiScopeNames = Object.keys(apiScopes) as ApiScope[]

export const isApiScope = (value: string): value is ApiScope => Object.hasOwn(apiScopes, value)

/** OpenID Connect's own scopes, which the provider also grants (spec: Authentication 7). */
export const openIdScopes = {
  openid: 'Sign in: who you are (required for /userinfo)',
  profile: 'Your name',
  email: 'Your email address',
  address: 'Your postal address',
  phone: 'Your phone number',
  offline_access: 'Stay signed in (refresh tokens)',
} as const

/** One scope of the catalogue: what an API key may be created with (anything else is 422). */
export const ApiKeyScope = Type.Enum(apiScopeNames, {
  description: 'a scope of the catalogue (docs/explanation/security.md: API scopes)',
})
export type ApiKeyScope = Static<typeof ApiKeyScope>
