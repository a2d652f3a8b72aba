// Who may do what with the users resource: admins manage everyone; a user reads, changes and removes only
// themself; anyone may register, but only an admin may set `role` or `status` (on create and on change), change an
// address with PATCH (a user changes their own with POST /users/{id}/email-change), or create a user without a
// password (an invited user). A credential limited to scopes needs admin:write as well to act on
// another user's account or to set a role or status: those are an administrator's operations.
import { AppError } from '@meridian/contracts'
import { assertOwnerOrRole, assertScopes, holdsRole, type Principal } from '@meridian/service-kit'
import type { FastifyInstance, onRequestHookHandler, preHandlerHookHandler } from 'fastify'
import type { UsersGuards } from './index.ts'

const privilegedFields = ['role', 'status'] as const

export function usersGuards(app: FastifyInstance): UsersGuards {
  // authentication runs first, in onRequest: a caller without credentials is 401 before any validation answers
  const authenticate = app.authenticate as onRequestHookHandler
  const adminOnly = app.requireRole('admin') as onRequestHookHandler

  const ownerOrAdmin: onRequestHookHandler = async (request) => {
    const { id } = request.params as { id: string }
    assertOwnerOrRole(request.principal, id, 'admin')
  }

  // before the role: a scoped credential acting on someone else's account is refused for its scope first
  const othersNeedAdminScope: onRequestHookHandler = async (request) => {
    const { id } = request.params as { id: string }
    const principal = request.principal
    if (principal && !isSelf(principal, id)) assertScopes(principal, ['admin:write'])
  }

  // after body validation: only then is it known whether role or status is being set, or a password left out
  const privilegedFieldsAdminOnly: preHandlerHookHandler = async (request) => {
    const body = request.body as Record<string, unknown> | undefined
    // a change of address (not the one given at registration) is an admin's: yours needs your password and a link
    // to the new one (POST /users/{id}/email-change)
    const fields = request.method === 'PATCH' ? [...privilegedFields, 'email'] : privilegedFields
    const setting = fields.filter((field) => body?.[field] !== undefined)
    // only POST takes a password: PATCH never does
    const inviting = request.method === 'POST' && body?.password === undefined
    if (setting.length === 0 && !inviting) return
    // registration is anonymous: someone setting a role or inviting a user must first say who they are
    const principal = await app.principalOf(request)
    if (setting.length > 0) assertScopes(principal, ['admin:write'])
    if (holdsRole(principal, ['admin'])) return
    if (inviting) throw AppError.forbidden('Only an admin may create a user without a password')
    const ownAddress = setting.includes('email')
      ? ' (change your own address with POST /api/v1/users/{id}/email-change)'
      : ''
    throw AppError.forbidden(`Only an admin may set ${setting.join(' and ')}${ownAddress}`)
  }

  return {
    list: [authenticate, adminOnly],
    read: [authenticate, ownerOrAdmin],
    write: [authenticate, othersNeedAdminScope, ownerOrAdmin],
    privilegedFields: [privilegedFieldsAdminOnly],
  }
}

const isSelf = (principal: Principal, userId: string) =>
  principal.kind === 'user' && principal.subject === userId
