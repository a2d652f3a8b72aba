// /api/v1/users: the users directory (list, create, read, change, remove).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateUserBody,
  IfMatchHeader,
  IfNoneMatchHeader,
  Paginated,
  PartialUser,
  UpdateUserBody,
  User,
  UserIdParams,
  UserListQuery,
} from '@meridian/contracts'
import { type AuditSource, auditSourceOf, errorResponses, holdsRole, security } from '@meridian/service-kit'
import type { FastifyRequest, onRequestHookHandler, preHandlerHookHandler } from 'fastify'
import { Type } from 'typebox'
import { isNotModified } from '../../domain/user-version.ts'
import { presentUser, type UserUseCases } from '../../domain/users.ts'

/**
 * The audit source of an admin's request (its credential checked by the route's guards); undefined for anyone else:
 * a user registering or changing their own account is not an operator's action.
 */
function adminSourceOf(request: FastifyRequest): AuditSource | undefined {
  const { principal } = request
  return principal && holdsRole(principal, ['admin']) ? auditSourceOf(request, principal) : undefined
}

/** Who may do what (see access.ts); without guards the directory is open, like an unauthenticated internal API. */
export interface UsersGuards {
  /** onRequest of GET /users */
  list?: onRequestHookHandler[]
  /** onRequest of GET /users/:id */
  read?: onRequestHookHandler[]
  /** onRequest of PATCH and DELETE /users/:id */
  write?: onRequestHookHandler[]
  /**
   * preHandler of POST /users and PATCH /users/:id, after validation: who may set role and status, and create a
   * user without a password
   */
  privilegedFields?: preHandlerHookHandler[]
}

export interface UsersRoutesOptions {
  users: UserUseCases
  guards?: UsersGuards
}

export const usersRoutes: FastifyPluginAsyncTypebox<UsersRoutesOptions> = async (
  app,
  { users, guards = {} },
) => {
  const tags = ['users']

  app.get(
    '/users',
    {
      onRequest: guards.list ?? [],
      schema: {
        tags,
        summary: 'List users: page, limit, sort, filters, full-text search, sparse fields (admins)',
        security: security.requires('users:read'),
        querystring: UserListQuery,
        response: { 200: Paginated(PartialUser), ...errorResponses(401, 403) },
      },
    },
    async (request) => users.listUsers(request.query, request.url.split('?')[0] ?? request.url),
  )

  app.post(
    '/users',
    {
      preHandler: guards.privilegedFields ?? [],
      schema: {
        tags,
        summary:
          'Create a user (open to anyone; only an admin may set role or status, or leave out the password)',
        description:
          'Emits user.registered. Without a password (admins only; anyone else gets 403, an anonymous caller 401) ' +
          'the user is created `invited`, whatever status was sent: they cannot sign in until an admin sets their ' +
          'password (PUT /users/{id}/password), which makes them active.',
        security: security.optional('users:write'),
        body: CreateUserBody,
        response: { 201: User, ...errorResponses(401, 403, 409) },
      },
    },
    async (request, reply) => {
      const { user, etag } = await users.registerUser(request.body, adminSourceOf(request))
      return reply
        .code(201)
        .header('location', `/api/v1/users/${user.id}`)
        .header('etag', etag)
        .send(presentUser(user) as User)
    },
  )

  app.get(
    '/users/:id',
    {
      onRequest: guards.read ?? [],
      schema: {
        tags,
        summary: 'Read a user (ETag; If-None-Match answers 304)',
        security: security.requires('users:read'),
        params: UserIdParams,
        headers: IfNoneMatchHeader,
        response: {
          200: User,
          304: Type.Null({
            description: 'Not modified: the copy named by If-None-Match is current (no body)',
          }),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const { user, etag } = await users.getUser(request.params.id)
      reply.header('etag', etag)
      // a 304 has no body at all (not even JSON null), so nothing is passed to send
      if (isNotModified(request.headers['if-none-match'], etag))
        return reply.code(304).send(undefined as never)
      return presentUser(user) as User
    },
  )

  app.patch(
    '/users/:id',
    {
      onRequest: guards.write ?? [],
      preHandler: guards.privilegedFields ?? [],
      schema: {
        tags,
        summary: 'Change some fields of a user (If-Match: the ETag you read, or 412)',
        description:
          'Emits user.profile_changed with the whole user after the change. An invited user leaves `invited` only ' +
          'when an admin sets their password: another status is 409.',
        security: security.requires('users:write'),
        params: UserIdParams,
        headers: IfMatchHeader,
        body: UpdateUserBody,
        response: { 200: User, ...errorResponses(401, 403, 404, 409, 412) },
      },
    },
    async (request, reply) => {
      const { user, etag } = await users.changeUser(
        request.params.id,
        request.body,
        request.headers['if-match'],
        adminSourceOf(request),
      )
      return reply.header('etag', etag).send(presentUser(user) as User)
    },
  )

  app.delete(
    '/users/:id',
    {
      onRequest: guards.write ?? [],
      schema: {
        tags,
        summary: 'Remove a user',
        description: 'Emits user.removed; every credential the user held stops working.',
        security: security.requires('users:write'),
        params: UserIdParams,
        response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await users.removeUser(request.params.id, adminSourceOf(request))
      return reply.code(204).send(null)
    },
  )
}
