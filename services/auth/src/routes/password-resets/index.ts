// POST /api/v1/password-resets (a reset link mailed, if an account has the address) and
// POST /api/v1/password-resets/{token} (a new password with the link's token). Neither takes a credential; both are
// limited per client (the route's rate limit), the request per address too (domain/address-throttle.ts). The token is
// a secret path parameter: logs and traces show [redacted] in its place (service-kit's secretPathParameters).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  PasswordResetAccepted,
  PasswordResetBody,
  PasswordResetRequestBody,
  PasswordResetTokenParams,
} from '@meridian/contracts'
import { errorResponses } from '@meridian/service-kit'
import { Type } from 'typebox'
import { invalidResetLinkMessage, type PasswordReset } from '../../domain/password-reset.ts'

export interface PasswordResetRoutesOptions {
  passwordReset: PasswordReset
  /** requests per client address within the window (PASSWORD_RESET_MAX_PER_CLIENT, _WINDOW_SECONDS) */
  perClient: { max: number; timeWindowMs: number }
}

/** The answer to every reset request that is not refused: whether an account has the address is never told. */
export const resetRequestedMessage =
  'If an account has this address, a link to reset its password is on its way. It works once, for a limited time.'

export const passwordResetRoutes: FastifyPluginAsyncTypebox<PasswordResetRoutesOptions> = async (
  app,
  { passwordReset, perClient },
) => {
  const tags = ['authentication']
  const rateLimit = { max: perClient.max, timeWindow: perClient.timeWindowMs }

  app.post(
    '/password-resets',
    {
      schema: {
        tags,
        summary: 'Ask for a password reset link by mail',
        description:
          'Mails a link that sets a new password to the address, if an active account has it. The answer is the ' +
          'same 202, with the same body and after the same work, whether or not one does. The link works once, ' +
          'for PASSWORD_RESET_TTL_MS (30 minutes by default); a newer link, or any change of the password, ends ' +
          'it. Too many requests for one address (whether or not an account has it) or from one client are 429.',
        body: PasswordResetRequestBody,
        response: {
          202: PasswordResetAccepted,
          ...errorResponses(400, 413, 415, 422, 429),
        },
      },
      config: { rateLimit },
    },
    async (request, reply) => {
      await passwordReset.request(request.body.email)
      return reply.code(202).send({ message: resetRequestedMessage })
    },
  )

  app.post(
    '/password-resets/:token',
    {
      schema: {
        tags,
        summary: "Set a new password with a reset link's token; signs the user out everywhere",
        description:
          'The token is the last path segment of the mailed link. Sets the password (the rules of registration), ' +
          "ends every session, refresh token and OpenID Connect grant of the user, and mails a 'your password was " +
          `changed' notice. A token that is unknown, expired, already used, superseded by a newer link or ended by a ` +
          `password change is 400 BAD_REQUEST \`${invalidResetLinkMessage}\`, whichever it is.`,
        params: PasswordResetTokenParams,
        body: PasswordResetBody,
        response: {
          204: Type.Null({ description: 'the password is set; no body' }),
          ...errorResponses(400, 413, 414, 415, 422, 429),
        },
      },
      config: { rateLimit, secretPathParameters: ['token'] },
    },
    async (request, reply) => {
      await passwordReset.complete(request.params.token, request.body.password)
      return reply.code(204).send(null)
    },
  )
}
