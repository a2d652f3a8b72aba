// Routes for the other services, not for clients (each finds inventory in Consul): the gateway's route table does
// not reach them, and the chassis refuses every /internal/ request that lacks the services' shared credential
// (X-Service-Credential) with 401.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ProductLookup, ProductLookupBody } from '@meridian/contracts'
import type { ProductUseCases } from '../../domain/products.ts'

export interface InternalRoutesOptions {
  products: ProductUseCases
}

export const internalRoutes: FastifyPluginAsyncTypebox<InternalRoutesOptions> = async (app, { products }) => {
  app.post(
    '/internal/products/lookup',
    {
      schema: {
        tags: ['internal'],
        summary:
          'Products by id, with price and availability, for pricing an order (the service credential is required; the gateway does not route /internal)',
        body: ProductLookupBody,
        response: { 200: ProductLookup },
      },
    },
    async (request) => ({ products: await products.lookupProducts(request.body.ids) }),
  )
}
