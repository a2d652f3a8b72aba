// Authentication: token claims, token pairs, sessions and the names every service shares to read them.
import { type Static, Type } from 'typebox'

/** Claims of an access token signed by auth (spec: Token claims). `iss`, `aud` and `nbf` are checked when present. */
export const TokenClaims = Type.Object({
  sub: Type.String({ description: 'subject: the user id (or the client id of a client_credentials token)' }),
  name: Type.Optional(Type.String()),
  role: Type.String(),
  roles: Type.Array(Type.String(), { default: [] }),
  email: Type.Optional(Type.String()),
  scope: Type.Optional(Type.String({ description: 'space-separated OAuth scopes, when issued to a client' })),
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
    password: Type.String({ minLength: 1, maxLength: 1024 }),
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

/** The server-side session of the cookie-session mode (spec: Session record), stored as JSON in Redis. */
export const SessionRecord = Type.Object({
  userId: Type.String(),
  role: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
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
} as const
