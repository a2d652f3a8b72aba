// Routes for the other services, not for clients (each finds auth in Consul, or through AUTH_JWKS_URL's origin): the
// gateway's route table does not reach them, and the chassis refuses every /internal/ request that lacks the
// services' shared credential (X-Service-Credential) with 401.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiKeyIntrospection, ApiKeyIntrospectionBody } from '@meridian/contracts'
import type { ApiKeyUseCases } from '../../domain/api-keys.ts'

export interface InternalRoutesOptions {
  apiKeys: ApiKeyUseCases
}

export const internalRoutes: FastifyPluginAsyncTypebox<InternalRoutesOptions> = async (app, { apiKeys }) => {
  app.post(
    '/internal/api-keys/introspect',
    {
      schema: {
        tags: ['internal'],
        summary:
          'Whose is this API key? For services behind the gateway (the service credential is required; the gateway does not route /internal)',
        body: ApiKeyIntrospectionBody,
        response: { 200: ApiKeyIntrospection },
      },
    },
    async (request) => {
      const principal = await apiKeys.verifyApiKey(request.body.key)
      if (!principal) return { active: false }
      return {
        active: true,
        subject: principal.subject,
        role: principal.role,
        ...(principal.name === undefined ? {} : { name: principal.name }),
        ...(principal.email === undefined ? {} : { email: principal.email }),
        ...(principal.emailVerified === undefined ? {} : { emailVerified: principal.emailVerified }),
        scopes: principal.scopes,
        ...(principal.apiKeyId === undefined ? {} : { apiKeyId: principal.apiKeyId }),
      }
    },
  )
}
