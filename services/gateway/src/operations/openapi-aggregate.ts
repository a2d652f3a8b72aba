// /docs of the gateway: its own OpenAPI document merged with each routed service's (paths the gateway routes to that
// service only), fetched from one healthy instance per service and reused for a short while.
import { documentedErrorResponse } from '@meridian/service-kit'
import type { FastifyInstance } from 'fastify'
import { request as httpRequest } from 'undici'
import { createRouteMatcher, type GatewayRoute } from '../proxy/route-table.ts'
import type { UpstreamService, UpstreamServices } from '../upstreams/upstream-services.ts'

interface OpenApiDocument {
  paths?: Record<string, unknown>
  components?: Record<string, Record<string, unknown>>
  tags?: { name: string }[]
  info?: { description?: string }
  [key: string]: unknown
}

const documentPath = '/docs/json'

/**
 * What the gateway itself may answer on any path it routes, whatever the service documents: 400 (a path with dot
 * segments), 429 (its edge rate limit), 502, 503 (no healthy instance, an open circuit) and 504 (no answer in time).
 */
export const gatewayStatuses = [400, 429, 502, 503, 504] as const

const operationMethods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** A service's path item with the gateway's own statuses added to each operation's responses. */
function throughTheGateway(pathItem: unknown): unknown {
  if (typeof pathItem !== 'object' || pathItem === null) return pathItem
  return Object.fromEntries(
    Object.entries(pathItem).map(([key, operation]) => {
      if (!operationMethods.has(key) || typeof operation !== 'object' || operation === null) {
        return [key, operation]
      }
      const responses = { ...((operation as { responses?: Record<string, unknown> }).responses ?? {}) }
      for (const status of gatewayStatuses)
        responses[String(status)] ??= documentedErrorResponse(status, 'document')
      return [key, { ...operation, responses }]
    }),
  )
}
const fetchTimeoutMs = 2000

/** `/api/v1/users/{id}` as a concrete path the route matcher understands. */
const samplePath = (openApiPath: string) => openApiPath.replace(/\{[^{}]+\}/g, 'x')

async function serviceDocument(service: UpstreamService): Promise<OpenApiDocument | undefined> {
  const instance = service.anyInstance()
  if (!instance) return undefined
  const response = await httpRequest(`http://${instance.address}:${instance.port}${documentPath}`, {
    headersTimeout: fetchTimeoutMs,
    bodyTimeout: fetchTimeoutMs,
  })
  if (response.statusCode !== 200) {
    await response.body.dump()
    throw new Error(`answered ${response.statusCode}`)
  }
  return (await response.body.json()) as OpenApiDocument
}

export function mergeOpenApi(
  own: OpenApiDocument,
  services: { name: string; document: OpenApiDocument }[],
  routes: GatewayRoute[],
): OpenApiDocument {
  const matcher = createRouteMatcher(routes)
  const merged: OpenApiDocument = {
    ...own,
    paths: { ...own.paths },
    components: Object.fromEntries(
      Object.entries(own.components ?? {}).map(([kind, items]) => [kind, { ...items }]),
    ),
    tags: [...(own.tags ?? [])],
  }
  for (const { name, document } of services) {
    for (const [path, operations] of Object.entries(document.paths ?? {})) {
      // only what a client can reach through the gateway, and only from the service that serves it
      if (matcher.match(samplePath(path))?.service !== name) continue
      merged.paths![path] ??= throughTheGateway(operations)
    }
    for (const [kind, items] of Object.entries(document.components ?? {})) {
      const target = merged.components![kind] ?? {}
      merged.components![kind] = target
      for (const [key, value] of Object.entries(items)) target[key] ??= value
    }
    for (const tag of document.tags ?? []) {
      if (!merged.tags!.some((known) => known.name === tag.name)) merged.tags!.push(tag)
    }
  }
  return merged
}

export function aggregateOpenApi(
  app: FastifyInstance,
  options: { upstreams: UpstreamServices; routes: GatewayRoute[]; cacheMs: number },
): void {
  let cached: { at: number; body: string } | undefined
  let building: Promise<string> | undefined

  async function build(own: OpenApiDocument): Promise<string> {
    const documents = await Promise.all(
      options.upstreams.all().map(async (service) => {
        try {
          const document = await serviceDocument(service)
          return document ? [{ name: service.name, document }] : []
        } catch (error) {
          app.log.warn(
            { upstream: service.name, err: error },
            'OpenAPI document of a service could not be read',
          )
          return []
        }
      }),
    )
    return JSON.stringify(mergeOpenApi(own, documents.flat(), options.routes))
  }

  app.addHook('onSend', async (request, reply, payload) => {
    if (
      request.routeOptions.url !== documentPath ||
      reply.statusCode !== 200 ||
      typeof payload !== 'string'
    ) {
      return payload
    }
    if (cached && Date.now() - cached.at < options.cacheMs) {
      reply.removeHeader('content-length')
      return cached.body
    }
    building ??= build(JSON.parse(payload) as OpenApiDocument).finally(() => {
      building = undefined
    })
    const body = await building
    cached = { at: Date.now(), body }
    reply.removeHeader('content-length')
    return body
  })
}
