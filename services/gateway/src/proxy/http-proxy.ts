// The proxied routes: one per route-table prefix, in a context whose bodies stay unread streams. Each request goes
// through the chassis' hooks (request id, rate limit, metrics, logs) like any other, then is dispatched with undici
// to an instance the balancer picks; the answer is relayed straight into the client's response (response-relay.ts).
// Retries, ejection and the circuit are decided here.
import type { IncomingHttpHeaders } from 'node:http'
import { AppError } from '@meridian/contracts'
import {
  assertIdempotencyKeyOnce,
  bodyLimitBytes,
  maxPathParameterLength,
  type ServiceInstance,
} from '@meridian/service-kit'
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import { Agent, type Dispatcher } from 'undici'
import type { UpstreamService, UpstreamServices } from '../upstreams/upstream-services.ts'
import { clientResponseHeaders, type ForwardingContext, upstreamRequestHeaders } from './forwarded-headers.ts'
import {
  BodyTooLargeError,
  type ClientBodyFailure,
  LimitedRequestBody,
  payloadTooLarge,
  uploadBroken,
} from './request-body-limit.ts'
import { ResponseRelay } from './response-relay.ts'
import {
  type GatewayRoute,
  hasDotSegment,
  hasOverlongSegment,
  routePatterns,
  upstreamUrl,
} from './route-table.ts'
import {
  badGateway,
  classifyAttemptFailure,
  gatewayTimeout,
  idempotentMethods,
  recordUpstreamAnswer,
  upstreamUnavailable,
} from './upstream-failure.ts'
import {
  isUpgrade,
  isWebSocketHandshake,
  upgradeNotAccepted,
  type WebSocketPassThrough,
} from './websocket-proxy.ts'

export interface ProxyOptions {
  routes: GatewayRoute[]
  upstreams: UpstreamServices
  /** time to the upstream's response headers, and between body chunks, ms */
  timeoutMs: number
  connectTimeoutMs: number
  /** attempts of an idempotent request whose connection failed, each on another instance when there is one */
  maxAttempts: number
  forwarding(request: FastifyRequest): ForwardingContext
  /** edge headers (CORS) for a relayed answer, which bypasses Fastify's onSend hooks */
  relayedResponseHeaders(request: FastifyRequest, reply: FastifyReply): void
  websocket: WebSocketPassThrough
}

const proxiedMethods: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/** Not found, in the chassis' words (the same message its 404 handler gives). */
export const routeNotFound = (request: FastifyRequest) =>
  AppError.notFound(`Route ${request.method} ${request.url.split('?')[0] ?? request.url} not found`)

/**
 * Whether the client's connection is gone (not the request's socket: undici detaches it from a request stream it
 * has read to the end).
 */
const clientGone = (reply: FastifyReply) => reply.raw.destroyed || reply.raw.socket?.destroyed === true

/** One request's progress across its attempts. */
interface Exchange {
  request: FastifyRequest
  reply: FastifyReply
  service: UpstreamService
  /** path and query on the instance */
  path: string
  /** this request is the circuit's half-open probe */
  probe: boolean
  /** instances tried so far */
  tried: Set<string>
  /** who asked, as the upstream is told (the same on every attempt) */
  forwarding: ForwardingContext
  /** the attempt under way */
  relay: ResponseRelay | undefined
  /** the client's body as the upstream reads it (the same stream on every attempt); undefined without a body */
  body: LimitedRequestBody | undefined
}

/** Whether the request carries a body (RFC 9112 §6.3): declared by a length above zero or a transfer coding. */
const hasBody = (headers: IncomingHttpHeaders) =>
  headers['transfer-encoding'] !== undefined ||
  (headers['content-length'] !== undefined && headers['content-length'] !== '0')

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
  app.addHook('onClose', async () => {
    await agent.close()
  })

  /** One attempt on one instance; on a connection failure of an idempotent request, the next one elsewhere. */
  function attempt(exchange: Exchange): void {
    const { request, reply, service } = exchange
    const picked = service.pick(exchange.tried)
    if (!picked.instance) {
      if (exchange.tried.size > 0) service.requestFailed()
      else service.requestAbandoned(exchange.probe)
      answer(exchange, upstreamUnavailable(picked.retryAfterSeconds))
      return
    }
    const instance: ServiceInstance = picked.instance
    exchange.tried.add(instance.id)
    const host = instance.address.includes(':') ? `[${instance.address}]` : instance.address

    const relay = new ResponseRelay(reply.raw, {
      started(statusCode, headers) {
        if (clientGone(reply)) return undefined
        recordUpstreamAnswer(service, instance, statusCode, headers)
        options.relayedResponseHeaders(request, reply)
        // a connection whose request body was not read to its end cannot carry another request
        if (!request.raw.complete) reply.header('connection', 'close')
        // the edge's headers (request id, rate-limit counters, CORS) with the service's own
        return clientResponseHeaders(headers, reply.getHeaders())
      },
      committed() {
        reply.hijack()
      },
      failed(error) {
        const failure = classifyAttemptFailure(error)
        const log = { upstream: service.name, instance: instance.id, attempt: exchange.tried.size }
        // what the client caused (went away, a body over the limit or broken off) is no verdict on the instance
        // or the circuit: one anonymous client could otherwise eject every instance of a service
        const upload = exchange.body?.clientFailure
        if (clientGone(reply)) {
          service.requestAbandoned(exchange.probe)
          request.log.info(
            { ...log, code: upload?.code ?? failure.code },
            'client went away during the upstream call',
          )
          return
        }
        if (upload !== undefined) {
          service.requestAbandoned(exchange.probe)
          request.log.info({ ...log, code: upload.code }, 'request body refused during the upstream call')
          refuseBody(reply, upload)
          return
        }
        service.attemptFailed(instance, failure.code)
        request.log.warn({ ...log, code: failure.code, kind: failure.kind }, 'upstream attempt failed')
        if (failure.kind === 'timeout') {
          service.requestFailed()
          answer(exchange, gatewayTimeout(timeoutMs))
          return
        }
        if (failure.kind === 'connection' && mayRetry(exchange) && exchange.tried.size < maxAttempts) {
          attempt(exchange)
          return
        }
        service.requestFailed()
        answer(
          exchange,
          failure.kind === 'connection' ? upstreamUnavailable(service.retryAfterSeconds()) : badGateway(),
        )
      },
      brokeOff(error) {
        const failure = classifyAttemptFailure(error)
        const upload = exchange.body?.clientFailure
        const log = { upstream: service.name, instance: instance.id, code: upload?.code ?? failure.code }
        if (clientGone(reply)) {
          // the client left while the answer was flowing: the call was let go, nothing against the instance
          request.log.info(log, 'client went away during the answer')
          return
        }
        if (upload !== undefined) {
          // the answer had started before the body broke off or passed the limit: cut short, nothing against it
          request.log.info(log, 'request body refused during the answer; the client response is cut short')
          return
        }
        service.attemptFailed(instance, failure.code)
        request.log.warn(log, 'upstream answer broke off; the client response is cut short')
      },
    })
    exchange.relay = relay

    const headers = upstreamRequestHeaders(request.headers, exchange.forwarding)
    headers.host = `${host}:${instance.port}`
    const dispatch: Dispatcher.DispatchOptions = {
      origin: `http://${host}:${instance.port}`,
      path: exchange.path,
      method: request.method as Dispatcher.HttpMethod,
      headers,
      body: exchange.body ?? null,
      // retries are decided here (on another instance), never by undici on the same connection
      idempotent: false,
    }
    agent.dispatch(dispatch, relay)
  }

  /**
   * Not async: a handler's promise resolved with the reply makes Fastify follow the response to its end (stream
   * listeners, a promise; ~4 µs a request in profiles), and the relay ends the response itself. What is thrown here
   * reaches the error handler all the same; only a WebSocket upgrade returns a promise.
   */
  function forward(
    route: GatewayRoute,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<FastifyReply> | undefined {
    // a segment over the routers' parameter limit matched a shorter prefix than its own: 414, as its service says it
    if (hasOverlongSegment(request.raw.url ?? '/', maxPathParameterLength))
      throw new AppError(414, 'URI_TOO_LONG')
    const service = upstreams.get(route.service)
    const path = upstreamUrl(route, request.raw.url ?? '/')
    if (!service || path === undefined) throw routeNotFound(request)
    // a path that normalises elsewhere (../) never leaves the gateway: the route table decided on the raw one
    if (hasDotSegment(path)) throw AppError.badRequest('Malformed request path')
    // forwarded, two Idempotency-Key lines would reach the service as one joined value ("a, b"), a key of its own
    assertIdempotencyKeyOnce(request.raw.rawHeaders)
    if (isUpgrade(request.raw)) {
      if (!route.websocket || !isWebSocketHandshake(request.raw)) throw upgradeNotAccepted()
      return options.websocket.passThrough(request, reply, service, path)
    }
    // a body over the limit is refused here when its length is declared, and counted as it flows otherwise
    if (Number(request.headers['content-length'] ?? 0) > bodyLimitBytes) throw payloadTooLarge()
    const admission = service.admit()
    if (!admission.admitted) {
      throw upstreamUnavailable(Math.ceil(admission.retryAfterMs / 1000))
    }
    const exchange: Exchange = {
      request,
      reply,
      service,
      path,
      probe: admission.probe,
      tried: new Set(),
      forwarding: options.forwarding(request),
      relay: undefined,
      body: hasBody(request.headers) ? new LimitedRequestBody(request.raw, bodyLimitBytes) : undefined,
    }
    reply.raw.once('close', () => exchange.relay?.clientClosed())
    attempt(exchange)
    return undefined
  }

  for (const route of options.routes) {
    for (const url of routePatterns(route)) {
      app.route({
        method: proxiedMethods,
        url,
        exposeHeadRoute: false,
        schema: { hide: true },
        // the wildcard's rest is the secret of such a route: logs and spans show [redacted]
        ...(route.secretBelow && url.endsWith('/*') ? { config: { secretPathParameters: ['*'] } } : {}),
        handler: (request, reply) => forward(route, request, reply),
      })
    }
  }
}

/** Only idempotent methods, and only while the request body (if any) has not started to flow upstream. */
function mayRetry({ request, body }: Exchange): boolean {
  if (!idempotentMethods.has(request.method)) return false
  return body === undefined || !(body.readableDidRead || body.destroyed)
}

/**
 * An error answer of the gateway's own. A connection whose request body was not read to its end cannot carry another
 * request; what is left of the body is read and dropped until it closes (request-body-limit.ts).
 */
function answer({ request, reply, body }: Exchange, error: AppError): void {
  if (body !== undefined && !request.raw.complete) {
    reply.header('connection', 'close')
    body.destroy()
  }
  reply.send(error)
}

/** The answer to a body the client made fail: 413 past the limit, 400 when it broke off (if anyone still listens). */
function refuseBody(reply: FastifyReply, failure: ClientBodyFailure): void {
  reply.header('connection', 'close')
  reply.send(failure instanceof BodyTooLargeError ? payloadTooLarge() : uploadBroken())
}
