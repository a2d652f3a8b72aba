// /api/v1/api-keys: a user's API keys (an admin's: anyone's). Created keys are shown once.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  ApiKey,
  ApiKeyListQuery,
  CreateApiKeyBody,
  CreatedApiKey,
  Paginated,
  paginate,
} from '@meridian/contracts'
import { auditSourceOf, authenticatedPrincipal, errorResponses, security } from '@meridian/service-kit'
import { Type } from 'typebox'
import type { ApiKeyUseCases } from '../../domain/api-keys.ts'

export interface ApiKeysRoutesOptions {
  apiKeys: ApiKeyUseCases
}

const ApiKeyIdParams = Type.Object({ id: Type.String({ format: 'uuid', maxLength: 36 }) })

/** Every route here runs `authenticate` first, so a request without a principal never reaches a handler. */

export const apiKeysRoutes: FastifyPluginAsyncTypebox<ApiKeysRoutesOptions> = async (app, { apiKeys }) => {
  const tags = ['api-keys']
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/api-keys',
    {
      schema: {
        tags,
        summary: 'Create an API key (the key is in this answer only); admins may pass another userId',
        security: security.requires('api-keys:write'),
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const principal = authenticatedPrincipal(request)
      const created = await apiKeys.createApiKey(principal, request.body, auditSourceOf(request, principal))
      return reply.code(201).header('location', `/api/v1/api-keys/${created.id}`).send(created)
    },
  )

  app.get(
    '/api-keys',
    {
      schema: {
        tags,
        summary:
          "List your API keys (admins: another user's with userId); keys themselves are never shown again",
        security: security.requires('api-keys:read'),
        querystring: ApiKeyListQuery,
        response: { 200: Paginated(ApiKey), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { items, total } = await apiKeys.listApiKeys(authenticatedPrincipal(request), request.query)
      const path = request.url.split('?')[0] ?? request.url
      return { data: items, ...paginate(path, request.query, request.query, total) }
    },
  )

  app.delete(
    '/api-keys/:id',
    {
      schema: {
        tags,
        summary: 'Revoke an API key (its owner or an admin)',
        security: security.requires('api-keys:write'),
        params: ApiKeyIdParams,
        response: { 204: Type.Null({ description: 'revoked' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const principal = authenticatedPrincipal(request)
      await apiKeys.revokeApiKey(principal, request.params.id, auditSourceOf(request, principal))
      return reply.code(204).send(null)
    },
  )
}
