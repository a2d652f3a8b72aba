// POST /login and POST /logout (spec paths, at the root): password login answered with a token pair or a cookie
// session, and the end of a cookie session.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AccessTokenResponse,
  authNames,
  LoginBody,
  LoginQuery,
  LogoutBody,
  TokenPair,
} from '@meridian/contracts'
import { errorResponses } from '@meridian/service-kit'
import { Type } from 'typebox'
import type { SignIn } from '../../domain/sign-in.ts'
import {
  clearRefreshCookie,
  clearSessionCookie,
  setRefreshCookie,
  setSessionCookie,
} from '../auth-cookies.ts'

export interface SessionsRoutesOptions {
  signIn: SignIn
  refreshTokenTtlSeconds: number
}

export const sessionsRoutes: FastifyPluginAsyncTypebox<SessionsRoutesOptions> = async (
  app,
  { signIn, refreshTokenTtlSeconds },
) => {
  const tags = ['authentication']

  // The client chooses the answer with the query string (not a header, so a plain HTML form can ask for a session):
  // ?mode=session -> 204 + session cookie; ?refresh=cookie -> the refresh token in its cookie, not in the body.
  app.post(
    '/login',
    {
      schema: {
        tags,
        summary: 'Log in with email and password',
        description:
          'Answers a token pair (200). With `?mode=session` it starts a server-side session instead: 204 and ' +
          `\`Set-Cookie: ${authNames.sessionCookie}=…; Path=/; HttpOnly; Secure; SameSite=Lax\`. With ` +
          `\`?refresh=cookie\` the refresh token is set as the \`${authNames.refreshCookie}\` cookie ` +
          `(Path=${authNames.refreshCookiePath}; HttpOnly; Secure; SameSite=Strict) and left out of the body. ` +
          'A wrong email or password, or an account that is not active, is 401 `Invalid email or password`; ' +
          'too many failures from one address or for one account are 429 with Retry-After.',
        querystring: LoginQuery,
        body: LoginBody,
        response: {
          200: Type.Union([TokenPair, AccessTokenResponse]),
          204: Type.Null({ description: 'cookie session started (mode=session); no body' }),
          ...errorResponses(401, 429),
        },
      },
    },
    async (request, reply) => {
      const subject = await signIn.authenticate(request.body, request.ip)
      if (request.query.mode === 'session') {
        const { sessionId, ttlSeconds } = await signIn.openSession(subject)
        setSessionCookie(reply, sessionId, ttlSeconds)
        return reply.code(204).send(null)
      }
      const pair = await signIn.issueTokenPair(subject)
      if (request.query.refresh === 'cookie') {
        setRefreshCookie(reply, pair.refreshToken, refreshTokenTtlSeconds)
        return { accessToken: pair.accessToken, tokenType: pair.tokenType, expiresIn: pair.expiresIn }
      }
      return pair
    },
  )

  // Idempotent: without a session cookie or refresh token, or with ones already ended or unknown, it is 204 too.
  app.post(
    '/logout',
    {
      schema: {
        tags,
        summary: 'Sign out: end the cookie session and revoke a refresh token',
        description:
          `Deletes the session named by the \`${authNames.sessionCookie}\` cookie and clears the cookie. With a JSON ` +
          'body `{"refreshToken": "…"}` (a client of the token pairs), revokes that token\'s whole family: it and ' +
          'every token rotated from the same login are refused by `/refresh` from then on, whichever member is sent. ' +
          `A \`${authNames.refreshCookie}\` cookie sent here is revoked (and cleared) the same way; a browser sends ` +
          `that cookie only to ${authNames.refreshCookiePath}, where \`DELETE\` revokes it. 204 whether or not ` +
          'there was a session or the token was known, live or already revoked (nothing is revealed about it, as ' +
          'RFC 7009 asks of revocation). Access tokens already issued stay valid until they expire.',
        body: LogoutBody,
        // the cookie is read when sent, never required: no credential is asked for, so none is declared
        response: {
          204: Type.Null({ description: 'no session or refresh family any more; the cookie is cleared' }),
          ...errorResponses(422),
        },
      },
      // a cookie session signs out with no body at all
      config: { optionalBody: true },
    },
    async (request, reply) => {
      const sessionId = request.cookies[authNames.sessionCookie]
      const refreshCookie = request.cookies[authNames.refreshCookie]
      await signIn.signOut({ sessionId, refreshToken: request.body.refreshToken })
      if (refreshCookie) await signIn.signOut({ refreshToken: refreshCookie })
      clearSessionCookie(reply)
      if (refreshCookie) clearRefreshCookie(reply)
      return reply.code(204).send(null)
    },
  )
}
