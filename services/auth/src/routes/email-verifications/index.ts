// POST /api/v1/email-verifications (a signed-in user whose address is not verified asks for a new link),
// POST /api/v1/email-verifications/{token} (a mailed link proves an address, or sets a new one) and
// POST /api/v1/users/{id}/email-change (your new address, with your password: a link to it, a notice to the current
// one). The token is a secret path parameter: logs and traces show [redacted] in its place (service-kit's
// secretPathParameters); all are limited per client like the password reset routes, and a new link per address too
// (domain/address-throttle.ts, in the use case).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AppError,
  EmailChangeAccepted,
  EmailChangeBody,
  EmailVerificationRequestBody,
  EmailVerificationRequested,
  EmailVerificationTokenParams,
  UserIdParams,
} from '@meridian/contracts'
import { errorResponses, security } from '@meridian/service-kit'
import type { onRequestHookHandler } from 'fastify'
import { Type } from 'typebox'
import {
  alreadyVerifiedMessage,
  type EmailVerification,
  invalidVerificationLinkMessage,
} from '../../domain/email-verification.ts'

export interface EmailVerificationRoutesOptions {
  emailVerification: EmailVerification
  /** who may ask to change a user's address: the users resource's write guard (the domain then wants the user) */
  guard: onRequestHookHandler[]
  /** requests per client address within the window (PASSWORD_RESET_MAX_PER_CLIENT, _WINDOW_SECONDS) */
  perClient: { max: number; timeWindowMs: number }
}

export const emailChangeRequestedMessage =
  'A link to confirm the new address is on its way to it; the address changes when it is used. The current address is told.'

export const verificationLinkSentMessage =
  'A new link to confirm your address is on its way to it; older links no longer work.'

export const emailVerificationRoutes: FastifyPluginAsyncTypebox<EmailVerificationRoutesOptions> = async (
  app,
  { emailVerification, guard, perClient },
) => {
  const rateLimit = { max: perClient.max, timeWindow: perClient.timeWindowMs }

  app.post(
    '/email-verifications',
    {
      onRequest: [app.authenticate as onRequestHookHandler],
      schema: {
        tags: ['users'],
        summary: 'Ask for a new link proving your address (the older link stops working)',
        description:
          "The signed-in user's own address, while it is not verified: a new link is mailed to it (for " +
          'EMAIL_VERIFICATION_TTL_MS), and every older verification link of the account stops working. No body, or ' +
          `\`{}\`. 409 CONFLICT \`${alreadyVerifiedMessage}\` once the address is verified; a client's credential ` +
          '(client_credentials) is 403. Limited per client like the other link routes, and per address ' +
          '(PASSWORD_RESET_MAX_PER_ACCOUNT requests within PASSWORD_RESET_WINDOW_SECONDS, whichever client asks): 429.',
        security: security.requires('users:write'),
        body: EmailVerificationRequestBody,
        response: {
          202: EmailVerificationRequested,
          ...errorResponses(401, 403, 404, 409, 413, 415, 422, 429),
        },
      },
      config: { rateLimit, optionalBody: true },
    },
    async (request, reply) => {
      if (!request.principal) throw AppError.unauthorized()
      await emailVerification.requestLink(request.principal)
      return reply.code(202).send({ message: verificationLinkSentMessage })
    },
  )

  app.post(
    '/email-verifications/:token',
    {
      schema: {
        tags: ['users'],
        summary: "Prove an address with a mailed link's token (or, for an address change, set it)",
        description:
          'The token is the last path segment of the mailed link; no body. The link mailed at registration marks ' +
          "the address verified (`emailVerified`, and `email_verified` in ID tokens) if it is still the account's; " +
          'the link of an address change sets the new address, verified (409 if another account took it ' +
          `meanwhile). A link that is unknown, expired, used or superseded is 400 BAD_REQUEST \`${invalidVerificationLinkMessage}\`.`,
        params: EmailVerificationTokenParams,
        response: {
          204: Type.Null({ description: 'the address is proved; no body' }),
          ...errorResponses(400, 409, 414, 429),
        },
      },
      config: { rateLimit, secretPathParameters: ['token'] },
    },
    async (request, reply) => {
      await emailVerification.confirm(request.params.token)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/users/:id/email-change',
    {
      // a copy: @fastify/rate-limit pushes this route's own limit onto the array, which the users routes share
      onRequest: [...guard],
      schema: {
        tags: ['users'],
        summary: 'Change your address: a link to the new one, with your password',
        description:
          'Only the user themself, with their password (a wrong one is 403 and counts like a failed login; an API ' +
          'key cannot). A link goes to the new address and the current one is told a change was asked for; the ' +
          'address changes when the link is used (POST /api/v1/email-verifications/{token}). An admin sets an ' +
          'address with PATCH instead (unverified until proved).',
        security: security.requires('users:write'),
        params: UserIdParams,
        body: EmailChangeBody,
        response: {
          202: EmailChangeAccepted,
          ...errorResponses(400, 401, 403, 404, 413, 415, 422, 429),
        },
      },
      config: { rateLimit },
    },
    async (request, reply) => {
      if (!request.principal) throw AppError.unauthorized()
      await emailVerification.requestChange(request.principal, request.params.id, request.body, request.ip)
      return reply.code(202).send({ message: emailChangeRequestedMessage })
    },
  )
}
