// GET /.well-known/jwks.json: the public RSA keys that verify auth's RS256 tokens and OpenID Connect ID tokens.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { JsonWebKeySet } from '@meridian/contracts'
import type { KeyRing } from '../../domain/signing-keys.ts'

export interface JwksRoutesOptions {
  keyRing: KeyRing
  maxAgeSeconds: number
}

export const jwksRoutes: FastifyPluginAsyncTypebox<JwksRoutesOptions> = async (
  app,
  { keyRing, maxAgeSeconds },
) => {
  app.get(
    '/.well-known/jwks.json',
    {
      // verifiers fetch it on every unknown kid and on cache expiry: not counted against the client rate limit
      config: { rateLimit: false },
      schema: {
        tags: ['authentication'],
        summary: 'Public signing keys (JWKS)',
        description: `The key that signs now, the next one (published before it signs) and retired ones until their tokens have expired. Cache-Control: public, max-age=${maxAgeSeconds}.`,
        // the schema is also the last guard: only public members of each key can be serialised
        response: { 200: JsonWebKeySet },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${maxAgeSeconds}`)
      return keyRing.publicJwks() as JsonWebKeySet
    },
  )
}
