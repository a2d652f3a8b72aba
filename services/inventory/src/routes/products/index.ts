// /api/v1/products: the catalogue (list and read for anyone; create, change and stock adjustments for admins).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateProductBody,
  IfMatchHeader,
  IfNoneMatchHeader,
  Paginated,
  PartialProduct,
  Product,
  ProductIdParams,
  ProductListQuery,
  StockAdjustmentBody,
  UpdateProductBody,
} from '@meridian/contracts'
import {
  type AuditSource,
  auditSourceOf,
  authenticatedPrincipal,
  errorResponses,
  security,
} from '@meridian/service-kit'
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import { Type } from 'typebox'
import { isNotModified } from '../../domain/product-version.ts'
import { type ProductUseCases, presentProduct } from '../../domain/products.ts'

/** Who changed the catalogue (an admin: the write routes' guards checked it), for the audit trail. */
const auditOf = (request: FastifyRequest): AuditSource =>
  auditSourceOf(request, authenticatedPrincipal(request))

/** Who may do what (see access.ts); without guards every route is open. */
export interface ProductsGuards {
  /** onRequest of POST /products, PATCH /products/:id and POST /products/:id/stock-adjustments */
  write?: onRequestHookHandler[]
}

export interface ProductsRoutesOptions {
  products: ProductUseCases
  guards?: ProductsGuards
}

export const productsRoutes: FastifyPluginAsyncTypebox<ProductsRoutesOptions> = async (
  app,
  { products, guards = {} },
) => {
  const tags = ['products']
  const write = guards.write ?? []

  app.get(
    '/products',
    {
      schema: {
        tags,
        summary:
          'List products (open to anyone): page, limit, sort, active and sku filters, full-text search, sparse fields',
        querystring: ProductListQuery,
        response: { 200: Paginated(PartialProduct) },
      },
    },
    async (request) => products.listProducts(request.query, request.url.split('?')[0] ?? request.url),
  )

  app.post(
    '/products',
    {
      onRequest: write,
      schema: {
        tags,
        summary: 'Create a product with its initial stock (admins)',
        security: security.requires('products:write'),
        body: CreateProductBody,
        response: { 201: Product, ...errorResponses(401, 403, 409, 422) },
      },
    },
    async (request, reply) => {
      const { product, etag } = await products.createProduct(request.body, auditOf(request))
      return reply
        .code(201)
        .header('location', `/api/v1/products/${product.id}`)
        .header('etag', etag)
        .send(presentProduct(product) as Product)
    },
  )

  app.get(
    '/products/:id',
    {
      schema: {
        tags,
        summary: 'Read a product (open to anyone; ETag, If-None-Match answers 304)',
        params: ProductIdParams,
        headers: IfNoneMatchHeader,
        response: {
          200: Product,
          304: Type.Null({
            description: 'Not modified: the copy named by If-None-Match is current (no body)',
          }),
          ...errorResponses(404),
        },
      },
    },
    async (request, reply) => {
      const { product, etag } = await products.getProduct(request.params.id)
      reply.header('etag', etag)
      // a 304 has no body at all (not even JSON null), so nothing is passed to send
      if (isNotModified(request.headers['if-none-match'], etag))
        return reply.code(304).send(undefined as never)
      return presentProduct(product) as Product
    },
  )

  app.patch(
    '/products/:id',
    {
      onRequest: write,
      schema: {
        tags,
        summary: 'Change some fields of a product (admins; If-Match: the ETag you read, or 412)',
        security: security.requires('products:write'),
        params: ProductIdParams,
        headers: IfMatchHeader,
        body: UpdateProductBody,
        response: { 200: Product, ...errorResponses(401, 403, 404, 412, 422) },
      },
    },
    async (request, reply) => {
      const { product, etag } = await products.changeProduct(
        request.params.id,
        request.body,
        request.headers['if-match'],
        auditOf(request),
      )
      return reply.header('etag', etag).send(presentProduct(product) as Product)
    },
  )

  app.post(
    '/products/:id/stock-adjustments',
    {
      onRequest: write,
      schema: {
        tags,
        summary:
          'Add units to (or take them from) the available stock (admins); 409 when it would go below zero',
        security: security.requires('products:write'),
        params: ProductIdParams,
        body: StockAdjustmentBody,
        response: { 200: Product, ...errorResponses(401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const { product, etag } = await products.adjustStock(request.params.id, request.body, auditOf(request))
      return reply.header('etag', etag).send(presentProduct(product) as Product)
    },
  )
}
