// POST /refresh (refresh token in the body) and POST /api/auth/refresh (refresh token in its cookie): rotation.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AccessTokenResponse, AppError, authNames, RefreshBody, TokenPair } from '@meridian/contracts'
import { errorResponses, security } from '@meridian/service-kit'
import { Type } from 'typebox'
import { invalidRefreshTokenMessage } from '../../domain/refresh-tokens.ts'
import type { SignIn } from '../../domain/sign-in.ts'
import { clearRefreshCookie, setRefreshCookie } from '../auth-cookies.ts'

export interface TokensRoutesOptions {
  signIn: SignIn
  refreshTokenTtlSeconds: number
}

export const tokensRoutes: FastifyPluginAsyncTypebox<TokensRoutesOptions> = async (
  app,
  { signIn, refreshTokenTtlSeconds },
) => {
  const tags = ['authentication']

  app.post(
    '/refresh',
    {
      schema: {
        tags,
        summary: 'Exchange a refresh token for a new token pair',
        description:
          'The refresh token is rotated: the one sent is spent, the answer carries its successor. Sending a spent ' +
          'token again revokes every token of its family. Unknown, spent, revoked or expired: 401.',
        body: RefreshBody,
        response: { 200: TokenPair, ...errorResponses(401) },
      },
    },
    async (request) => signIn.refresh(request.body.refreshToken),
  )

  // Only this path (spec), no /api/v1 form: the cookie's Path is exactly this path, so a browser would not send the
  // cookie to any other URL.
  app.post(
    authNames.refreshCookiePath,
    {
      schema: {
        tags,
        summary: 'Refresh with the refresh-token cookie',
        description: `Reads the \`${authNames.refreshCookie}\` cookie (set by \`POST /login?refresh=cookie\`), rotates it, sets the new cookie and answers the access token. Without a live cookie: 401 and the cookie is cleared.`,
        security: security.refreshCookie,
        response: { 200: AccessTokenResponse, ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      const refreshToken = request.cookies[authNames.refreshCookie]
      try {
        if (!refreshToken) throw AppError.unauthorized(invalidRefreshTokenMessage)
        const pair = await signIn.refresh(refreshToken)
        setRefreshCookie(reply, pair.refreshToken, refreshTokenTtlSeconds)
        return { accessToken: pair.accessToken, tokenType: pair.tokenType, expiresIn: pair.expiresIn }
      } catch (error) {
        // a dead cookie is useless to the browser: drop it with the 401
        if (error instanceof AppError && error.statusCode === 401) clearRefreshCookie(reply)
        throw error
      }
    },
  )

  // The refresh cookie reaches only its own path (so it leaks nowhere else): signing out of the cookie mode is a
  // DELETE of this same resource, which SameSite=Strict keeps other sites from triggering.
  app.delete(
    authNames.refreshCookiePath,
    {
      schema: {
        tags,
        summary: 'Sign out of the refresh-token cookie',
        description: `Revokes the whole family of the refresh token in the \`${authNames.refreshCookie}\` cookie (it and every token rotated from the same login are refused from then on) and clears the cookie. 204 whether or not a cookie was sent or its token was known, live or already revoked (nothing is revealed about it, as RFC 7009 asks of revocation). Access tokens already issued stay valid until they expire.`,
        // the cookie is revoked when sent, never required: without one it is 204 all the same
        security: [{}, ...security.refreshCookie],
        response: { 204: Type.Null({ description: 'the refresh family is revoked; the cookie is cleared' }) },
      },
    },
    async (request, reply) => {
      const refreshToken = request.cookies[authNames.refreshCookie]
      await signIn.signOut({ refreshToken })
      clearRefreshCookie(reply)
      return reply.code(204).send(null)
    },
  )
}
