// Authentication: token claims, token pairs, sessions and the names every service shares to read them.
import { type Static, Type } from 'typebox'
import { pageParameters, QueryObject } from './pagination.ts'
import { Nullable, Text } from './schema-kinds.ts'
import { ApiKeyScope, apiScopeNames } from './scopes.ts'

/** Claims of an access token signed by auth (spec: Token claims). `iss`, `aud` and `nbf` are checked when present. */
export const TokenClaims = Type.Object({
  sub: Type.String({ description: 'subject: the user id (or the client id of a client_credentials token)' }),
  name: Type.Optional(Type.String()),
  role: Type.String(),
  roles: Type.Array(Type.String(), { default: [] }),
  email: Type.Optional(Type.String()),
  email_verified: Type.Optional(
    Type.Boolean({
      description:
        "whether the user proved the address (auth's first-party tokens carry it as of their issue; a refresh brings it up to date)",
    }),
  ),
  scope: Type.Optional(
    Type.String({
      description:
        'space-separated OAuth scopes of a token the OpenID provider issued: the token is limited to them (first-party tokens of POST /login carry none)',
    }),
  ),
  iat: Type.Integer(),
  exp: Type.Integer(),
  nbf: Type.Optional(Type.Integer()),
  iss: Type.String(),
  aud: Type.Union([Type.String(), Type.Array(Type.String())]),
})
export type TokenClaims = Static<typeof TokenClaims>

export const LoginBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    password: Text({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
)
export type LoginBody = Static<typeof LoginBody>

export const TokenPair = Type.Object({
  accessToken: Type.String(),
  refreshToken: Type.String(),
  tokenType: Type.Literal('Bearer'),
  /** seconds until the access token expires */
  expiresIn: Type.Integer(),
})
export type TokenPair = Static<typeof TokenPair>

export const RefreshBody = Type.Object(
  { refreshToken: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
)
export type RefreshBody = Static<typeof RefreshBody>

/**
 * POST /logout's body, optional: the refresh token whose whole family is revoked (a client of the token pairs
 * signing out). Whatever the token, the answer is the same 204: nothing is revealed about it.
 */
export const LogoutBody = Type.Object(
  { refreshToken: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })) },
  { additionalProperties: false },
)
export type LogoutBody = Static<typeof LogoutBody>

/** The server-side session of the cookie-session mode (spec: Session record), stored as JSON in Redis. */
export const SessionRecord = Type.Object({
  userId: Type.String(),
  role: Type.String(),
  createdAt: Type.String({ format: 'date-time', maxLength: 64 }),
  /**
   * Whether the user had proved their address: written at sign-in from the user, and rewritten in place by auth when
   * it changes (the address verified, or changed and so unproved). Optional: a record written before it was added
   * does not say (as an access token without `email_verified`).
   */
  emailVerified: Type.Optional(Type.Boolean()),
})
export type SessionRecord = Static<typeof SessionRecord>

/** Names shared by auth (which writes them) and the authentication plugin of every service (which reads them). */
export const authNames = {
  /** cookie of the cookie-session mode: HttpOnly, Secure, SameSite=Lax, Path=/ */
  sessionCookie: 'meridian_session',
  /** Redis key of a session: prefix + session id */
  sessionKeyPrefix: 'session:',
  /** cookie holding the refresh token for POST /api/auth/refresh: HttpOnly, Secure, SameSite=Strict, that path only */
  refreshCookie: 'meridian_refresh',
  refreshCookiePath: '/api/auth/refresh',
  /** the only place an API key is accepted */
  apiKeyHeader: 'x-api-key',
  /**
   * the services' shared secret on their calls to each other's /internal/ routes; the gateway drops a client's, so
   * it only ever comes from inside
   */
  serviceCredentialHeader: 'x-service-credential',
  /** Redis key of a user's credential revocation: prefix + user id -> CredentialRevocation as JSON */
  revocationKeyPrefix: 'auth:credentials-revoked:',
  /** Redis channel on which auth announces each new CredentialRevocation (JSON) */
  revocationChannel: 'auth:credential-revocations',
  /** Redis channel on which auth announces each cookie session ended by logout (SessionEnded as JSON) */
  sessionEndedChannel: 'auth:sessions-ended',
} as const

/**
 * A user's credentials issued before `revokedBefore` no longer count: access tokens (by `iat`), cookie sessions (by
 * `createdAt`) and remembered API-key answers. Auth writes one when a user is suspended, deactivated, given a role or
 * deleted; every service follows them (service-kit's credential revocations). Kept until `until`, when every
 * credential it voids has expired anyway.
 */
export const CredentialRevocation = Type.Object({
  userId: Type.String({ minLength: 1 }),
  /** ms since the epoch */
  revokedBefore: Type.Integer({ minimum: 0 }),
  /** ms since the epoch */
  until: Type.Integer({ minimum: 0 }),
})
export type CredentialRevocation = Static<typeof CredentialRevocation>

/**
 * A cookie session that ended (logout): services holding connections of that session end them. It names the session
 * by the SHA-256 of its id (base64url; service-kit's sessionIdHash), never by the id itself, which is the credential.
 */
export const SessionEnded = Type.Object({
  sessionHash: Type.String({ minLength: 43, maxLength: 43, pattern: '^[A-Za-z0-9_-]+$' }),
})
export type SessionEnded = Static<typeof SessionEnded>

/**
 * How POST /login answers: `mode=session` starts a cookie session (204 + session cookie) instead of issuing tokens;
 * `refresh=cookie` puts the refresh token in the refresh cookie (for POST /api/auth/refresh) instead of the body.
 */
export const LoginQuery = Type.Object({
  mode: Type.Optional(
    Type.Union([Type.Literal('tokens'), Type.Literal('session')], {
      description: 'tokens (default): a token pair; session: a server-side session and its cookie, no tokens',
    }),
  ),
  refresh: Type.Optional(
    Type.Union([Type.Literal('body'), Type.Literal('cookie')], {
      description:
        'body (default): refreshToken in the response; cookie: in an HttpOnly cookie for /api/auth/refresh',
    }),
  ),
})
export type LoginQuery = Static<typeof LoginQuery>

/** An access token without a refresh token in the body (the refresh token travels in its cookie). */
export const AccessTokenResponse = Type.Object({
  accessToken: Type.String(),
  tokenType: Type.Literal('Bearer'),
  /** seconds until the access token expires */
  expiresIn: Type.Integer(),
})
export type AccessTokenResponse = Static<typeof AccessTokenResponse>

/** A public RSA signing key as published in the JWKS (RFC 7517): never any private part. */
export const PublicJwk = Type.Object({
  kty: Type.Literal('RSA'),
  kid: Type.String(),
  alg: Type.Literal('RS256'),
  use: Type.Literal('sig'),
  n: Type.String(),
  e: Type.String(),
})
export type PublicJwk = Static<typeof PublicJwk>

export const JsonWebKeySet = Type.Object({ keys: Type.Array(PublicJwk) })
export type JsonWebKeySet = Static<typeof JsonWebKeySet>

/**
 * API keys (server-to-server): `mk_<prefix>_<secret>`, sent only in the X-API-Key header. A key names its scopes from
 * the catalogue (scopes.ts: `users:read`, `orders:write`, ...), at least one: it can do only what they allow, and
 * never more than its owner's role at the moment it is used.
 */
export const CreateApiKeyBody = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 100 }),
    scopes: Type.Array(ApiKeyScope, {
      minItems: 1,
      maxItems: apiScopeNames.length,
      uniqueItems: true,
      description: 'what the key may do: one or more scopes of the catalogue',
    }),
    /** when the key stops working; never when absent */
    expiresAt: Type.Optional(Type.String({ format: 'date-time', maxLength: 64 })),
    /** an admin may create a key for another user; everyone else for themself only */
    userId: Type.Optional(Type.String({ format: 'uuid', maxLength: 36 })),
  },
  { additionalProperties: false },
)
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>

export const ApiKey = Type.Object({
  id: Type.String({ format: 'uuid', maxLength: 36 }),
  userId: Type.String({ format: 'uuid', maxLength: 36 }),
  name: Type.String(),
  /** the public part of the key (`mk_<prefix>_…`): how a key is recognised in lists and logs */
  prefix: Type.String(),
  /** the scopes it was created with */
  scopes: Type.Array(Type.String()),
  createdAt: Type.String({ format: 'date-time', maxLength: 64 }),
  expiresAt: Nullable(Type.String({ format: 'date-time', maxLength: 64 })),
  lastUsedAt: Nullable(Type.String({ format: 'date-time', maxLength: 64 })),
  revokedAt: Nullable(Type.String({ format: 'date-time', maxLength: 64 })),
})
export type ApiKey = Static<typeof ApiKey>

/** The answer to a creation: the only time the whole key is shown. */
export const CreatedApiKey = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'the API key; shown once, store it now' }),
})
export type CreatedApiKey = Static<typeof CreatedApiKey>

export const ApiKeyListQuery = QueryObject(
  {
    ...pageParameters,
    /** admins: another user's keys */
    userId: Type.Optional(Type.String({ format: 'uuid', maxLength: 36 })),
  },
  { additionalProperties: false },
)
export type ApiKeyListQuery = Static<typeof ApiKeyListQuery>

/** POST /internal/api-keys/introspect: how a service learns whose an API key is (RFC 7662's shape: `active`). */
export const ApiKeyIntrospectionBody = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
)
export type ApiKeyIntrospectionBody = Static<typeof ApiKeyIntrospectionBody>

export const ApiKeyIntrospection = Type.Object({
  /** false for an unknown, revoked or expired key, or one whose owner is not active; nothing else is said then */
  active: Type.Boolean(),
  subject: Type.Optional(Type.String()),
  role: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  /** whether the key's owner has proved their address, read with the answer (absent from an older auth's) */
  emailVerified: Type.Optional(Type.Boolean()),
  scopes: Type.Optional(Type.Array(Type.String())),
  apiKeyId: Type.Optional(Type.String()),
})
export type ApiKeyIntrospection = Static<typeof ApiKeyIntrospection>
