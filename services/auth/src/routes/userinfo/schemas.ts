// The claims GET/POST /userinfo answers: OpenID Connect's standard claims of the user and Meridian's role claims.
import { type Static, Type } from 'typebox'

/**
 * Only claims listed here can be serialised, so the schema is also the last guard on what leaves: when the users
 * directory gains addresses or phone numbers (the address and phone scopes), add their claims here.
 */
export const UserinfoClaims = Type.Object(
  {
    sub: Type.String({ description: 'the user id' }),
    name: Type.Optional(Type.String({ description: 'scope profile' })),
    preferred_username: Type.Optional(
      Type.String({ description: 'the email the user signs in with; scope profile' }),
    ),
    updated_at: Type.Optional(
      Type.Integer({ description: 'when the user was last changed, seconds since the epoch; scope profile' }),
    ),
    email: Type.Optional(Type.String({ description: 'scope email' })),
    email_verified: Type.Optional(
      Type.Boolean({
        description: 'whether the user proved the address (a link mailed to it was used); scope email',
      }),
    ),
    role: Type.Optional(Type.String({ description: 'Meridian access tokens only' })),
    roles: Type.Optional(Type.Array(Type.String(), { description: 'Meridian access tokens only' })),
  },
  {
    description:
      'With a Meridian access token: every claim. With an OpenID Connect access token: sub and the claims of its ' +
      'granted scopes (profile, email), as OIDC Core 5.4 releases them; no role claims.',
  },
)
export type UserinfoClaims = Static<typeof UserinfoClaims>
