// Routes for the other services, not for clients: the gateway's route table does not reach them, so they are
// served only on the internal network (each service finds inventory in Consul).
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
          'Products by id, with price and availability, for pricing an order (the gateway does not route /internal)',
        body: ProductLookupBody,
        response: { 200: ProductLookup },
      },
    },
    async (request) => ({ products: await products.lookupProducts(request.body.ids) }),
  )
}
