// GET and POST /userinfo (spec: bearer token -> claims of the current user), answered by auth rather than by the
// OpenID provider: it accepts Meridian access tokens as well as the provider's, and refuses in the error envelope.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, type securitySchemes } from '@meridian/service-kit'
import type { FastifyReply } from 'fastify'
import { bearerRealm, bearerTokenOf, type Userinfo } from '../../oidc/userinfo.ts'
import { UserinfoClaims } from './schemas.ts'

export interface UserinfoRoutesOptions {
  userinfo: Userinfo
}

/**
 * The bearer scheme only: /userinfo reads no API key and no session cookie (the chassis declares the schemes). A token
 * limited to scopes (the OpenID provider's) needs `openid`, as OpenID Connect's UserInfo does.
 */
const bearerOnly: Partial<Record<keyof typeof securitySchemes, string[]>>[] = [{ bearerAuth: ['openid'] }]

/** CORS for a browser client's page: it may read the answer (and its challenge) from its own origin. */
function allowOrigin(reply: FastifyReply, origin: string): void {
  reply.header('access-control-allow-origin', origin)
  reply.header('access-control-expose-headers', 'WWW-Authenticate')
}

export const userinfoRoutes: FastifyPluginAsyncTypebox<UserinfoRoutesOptions> = async (app, { userinfo }) => {
  // A form body (RFC 6750 2.2's way of sending the token) is accepted rather than refused with 415, but not read:
  // the token counts only in the Authorization header.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, _body, done) => done(null, undefined),
  )

  app.route({
    method: ['GET', 'POST'],
    url: '/userinfo',
    // the provider's opaque tokens are looked up here, not verified by the chassis
    config: { readsOwnCredential: true },
    schema: {
      tags: ['authentication'],
      summary: 'Claims of the current user (OpenID Connect UserInfo)',
      description:
        'Bearer token in the Authorization header (only there): a Meridian access token or an OpenID Connect ' +
        'access token with the `openid` scope. No token, or another scheme: 401 `Missing token`; a bad, unknown ' +
        'or expired token, or a user no longer active: 401 `Invalid or expired token`; an OpenID Connect token ' +
        'without `openid`: 403. Refusals carry `WWW-Authenticate: Bearer realm="' +
        bearerRealm +
        '"` with `error` and `error_description` when a token was presented (RFC 6750 3). Cache-Control: no-store. ' +
        'OPTIONS (CORS preflight) is answered by the OpenID provider.',
      security: bearerOnly,
      response: {
        200: UserinfoClaims,
        ...errorResponses(401, 403, 429),
      },
    },
    handler: async (request, reply) => {
      // the claims are personal data: no cache may keep them (the provider's own /userinfo sent no-store too)
      reply.header('cache-control', 'no-store')
      reply.header('vary', 'Origin')
      const { origin } = request.headers
      if (origin && userinfo.allowsOrigin(origin)) allowOrigin(reply, origin)
      const token = bearerTokenOf(request.headers.authorization)
      const { claims, clientId } = await userinfo.claimsFor(token, () => app.principalOf(request))
      // a provider token is read only from its own client's origin (as the provider's clientBasedCORS did)
      if (origin && clientId !== undefined && !userinfo.allowsOrigin(origin, clientId)) {
        reply.removeHeader('access-control-allow-origin')
        reply.removeHeader('access-control-expose-headers')
      }
      return claims
    },
  })
}
