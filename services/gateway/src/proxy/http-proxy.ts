// The proxied routes: one per route-table prefix, in a context whose bodies stay unread streams, forwarded with
// @fastify/reply-from to an instance the balancer picks; retries, ejection and the circuit are decided here.
import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import replyFrom from '@fastify/reply-from'
import { AppError } from '@meridian/contracts'
import { bodyLimitBytes, type ServiceInstance } from '@meridian/service-kit'
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import { Agent } from 'undici'
import { type GatewayRoute, routePatterns, upstreamUrl } from '../routes-table.ts'
import type { UpstreamService, UpstreamServices } from '../upstreams/upstream-services.ts'
import { clientResponseHeaders, type ForwardingContext, upstreamRequestHeaders } from './forwarded-headers.ts'
import {
  badGateway,
  classifyAttemptFailure,
  failureStatuses,
  gatewayTimeout,
  idempotentMethods,
  upstreamUnavailable,
} from './upstream-failure.ts'
import { isUpgrade, type WebSocketPassThrough } from './websocket-proxy.ts'

export interface ProxyOptions {
  routes: GatewayRoute[]
  upstreams: UpstreamServices
  /** time to the upstream's response headers, and between body chunks, ms */
  timeoutMs: number
  connectTimeoutMs: number
  /** attempts of an idempotent request whose connection failed, each on another instance when there is one */
  maxAttempts: number
  forwarding(request: FastifyRequest): ForwardingContext
  websocket: WebSocketPassThrough
}

const proxiedMethods: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

declare module 'fastify' {
  interface FastifyContextConfig {
    gatewayRoute?: GatewayRoute
  }
}

/** Not found, in the chassis' words (the same message its 404 handler gives). */
export const routeNotFound = (request: FastifyRequest) =>
  AppError.notFound(`Route ${request.method} ${request.url.split('?')[0] ?? request.url} not found`)

/** A Fastify plugin (not wrapped in fastify-plugin: its content-type parsers stay in this context). */
export async function proxyRoutes(app: FastifyInstance, options: ProxyOptions): Promise<void> {
  const { upstreams, timeoutMs, maxAttempts } = options
  // the body is passed on as the request stream: never buffered, never parsed here
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))

  const agent = new Agent({
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 10_000,
  })
  await app.register(replyFrom, { undici: agent, disableRequestLogging: true })
  app.addHook('onClose', async () => {
    await agent.close()
  })

  /** One attempt on one instance; on a connection failure of an idempotent request, the next one elsewhere. */
  function attempt(
    request: FastifyRequest,
    reply: FastifyReply,
    service: UpstreamService,
    url: string,
    state: { probe: boolean; tried: Set<string> },
  ): void {
    const picked = service.pick(state.tried)
    if (!picked.instance) {
      if (state.tried.size > 0) service.requestFailed()
      else service.requestAbandoned(state.probe)
      reply.send(upstreamUnavailable(picked.retryAfterSeconds))
      return
    }
    const instance: ServiceInstance = picked.instance
    state.tried.add(instance.id)
    const origin = `http://${instance.address.includes(':') ? `[${instance.address}]` : instance.address}:${instance.port}`
    const log = { upstream: service.name, instance: instance.id, attempt: state.tried.size }
    try {
      reply.from(url, {
        getUpstream: () => origin,
        // retries are decided below (on another instance), never by reply-from on the same one
        retryDelay: () => null,
        rewriteRequestHeaders: (_original, headers) => ({
          ...upstreamRequestHeaders(headers, options.forwarding(request)),
          host: String(headers.host),
        }),
        rewriteHeaders: (headers) => clientResponseHeaders(headers) as IncomingHttpHeaders,
        onResponse: (_request, proxied, response) => {
          if (failureStatuses.has(response.statusCode)) {
            service.attemptFailed(instance, `status ${response.statusCode}`)
            service.requestFailed()
          } else {
            service.attemptSucceeded(instance)
            service.requestSucceeded()
          }
          proxied.send(response.stream)
        },
        onError: (proxied, { error }) => {
          const failure = classifyAttemptFailure(error)
          // (request.raw itself may be destroyed by undici, which ends a body stream it could not send)
          if (request.raw.socket?.destroyed || proxied.raw.destroyed) {
            // the client went away: no verdict on the instance
            service.requestAbandoned(state.probe)
            request.log.info({ ...log, code: failure.code }, 'client went away during the upstream call')
            proxied.send(badGateway())
            return
          }
          service.attemptFailed(instance, failure.code)
          request.log.warn({ ...log, code: failure.code, kind: failure.kind }, 'upstream attempt failed')
          if (failure.kind === 'timeout') {
            service.requestFailed()
            proxied.send(gatewayTimeout(timeoutMs))
            return
          }
          if (failure.kind === 'connection' && mayRetry(request) && state.tried.size < maxAttempts) {
            attempt(request, reply, service, url, state)
            return
          }
          service.requestFailed()
          proxied.send(
            failure.kind === 'connection' ? upstreamUnavailable(service.retryAfterSeconds()) : badGateway(),
          )
        },
      })
    } catch (error) {
      // reply-from refuses some URLs (dot segments, malformed escapes) before any call
      service.requestAbandoned(state.probe)
      reply.send(AppError.badRequest('Malformed request path'))
      request.log.warn({ ...log, err: error }, 'request path refused by the proxy')
    }
  }

  async function forward(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const route = request.routeOptions.config.gatewayRoute
    const service = route ? upstreams.get(route.service) : undefined
    const url = route ? upstreamUrl(route, request.raw.url ?? '/') : undefined
    if (!route || !service || url === undefined) throw routeNotFound(request)
    if (isUpgrade(request.raw)) return options.websocket.passThrough(request, reply, service, url)
    // bodies over the limit are refused here when their length is declared; a chunked body is left to the
    // service, whose own 1 MB limit answers 413
    if (Number(request.headers['content-length'] ?? 0) > bodyLimitBytes) {
      throw new AppError(413, 'PAYLOAD_TOO_LARGE', { message: 'Request body is larger than 1 MB' })
    }
    const admission = service.admit()
    if (!admission.admitted) {
      throw upstreamUnavailable(Math.ceil(admission.retryAfterMs / 1000))
    }
    attempt(request, reply, service, url, { probe: admission.probe, tried: new Set() })
    return reply
  }

  for (const route of options.routes) {
    for (const url of routePatterns(route)) {
      app.route({
        method: proxiedMethods,
        url,
        exposeHeadRoute: false,
        schema: { hide: true },
        config: { gatewayRoute: route },
        handler: forward,
      })
    }
  }
}

/** Only idempotent methods, and only while the request body (if any) has not started to flow upstream. */
function mayRetry(request: FastifyRequest): boolean {
  if (!idempotentMethods.has(request.method)) return false
  const body = request.body as Readable | undefined
  return body === undefined || body === null || !(body.readableDidRead || body.destroyed)
}
