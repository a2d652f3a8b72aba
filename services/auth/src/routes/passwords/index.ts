// PUT /api/v1/users/{id}/password: a new password for a user (yourself with the current one, anyone as an admin).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError, ChangePasswordBody, UserIdParams } from '@meridian/contracts'
import { errorResponses, security } from '@meridian/service-kit'
import type { onRequestHookHandler } from 'fastify'
import { Type } from 'typebox'
import type { PasswordChange } from '../../domain/password-change.ts'

export interface PasswordRoutesOptions {
  passwordChange: PasswordChange
  /** who may change a user's password: the users resource's write guard (the user or an admin) */
  guard: onRequestHookHandler[]
}

export const passwordRoutes: FastifyPluginAsyncTypebox<PasswordRoutesOptions> = async (
  app,
  { passwordChange, guard },
) => {
  app.put(
    '/users/:id/password',
    {
      onRequest: guard,
      schema: {
        tags: ['users'],
        summary: 'Change a password (yours: give currentPassword); signs the user out everywhere',
        description:
          'Every access token, cookie session and refresh token the user held stops working at once, the ' +
          "caller's own included: sign in again with the new password. A wrong currentPassword is 403 and " +
          'counts towards the login throttle (429 when used up). An invited user (created without a password) ' +
          'becomes active with the password an admin sets, with a user.profile_changed event.',
        security: security.requires('users:write'),
        params: UserIdParams,
        body: ChangePasswordBody,
        response: {
          204: Type.Null({ description: 'changed; no body' }),
          ...errorResponses(400, 401, 403, 404, 413, 415, 422, 429),
        },
      },
    },
    async (request, reply) => {
      if (!request.principal) throw AppError.unauthorized()
      await passwordChange.changePassword(
        request.principal,
        request.params.id,
        request.body,
        request.ip,
        request.id,
      )
      return reply.code(204).send(null)
    },
  )
}
