// Request spans for every service: @fastify/otel registered on the app when tracing is on, named by route.
import type { FastifyOtelInstrumentationOpts } from '@fastify/otel'
import { ATTR_URL_PATH } from '@opentelemetry/semantic-conventions'
import type { FastifyInstance } from 'fastify'
import { loggableUrl } from '../logging.ts'
import { activeTracing, isOperationsPath } from './active-tracing.ts'

/** The attribute that keeps a traced request's X-Request-Id (the id clients and logs know it by). */
export const requestIdAttribute = 'meridian.request_id'

/**
 * @fastify/otel's settings: a span per request named `<METHOD> <route>`, with the request id as
 * `meridian.request_id` and `url.path` as the logs write it (a route's secret path segments and secret query
 * parameters' values replaced: logging.ts); probes and scrapes (/health, /metrics) left out. tracing.ts makes the one instrumentation
 * of the process with them as tracing starts.
 */
export const requestTracingOptions: FastifyOtelInstrumentationOpts = {
  ignorePaths: (route) => isOperationsPath(route.url),
  // a span per hook would outnumber the spans of the work itself (the kit alone has a dozen hooks)
  instrumentHooks: false,
  // the request span covers the handler; a child for it alone would be named by the plugin chain
  instrumentHandler: false,
  requestHook(span, request) {
    span.setAttribute(requestIdAttribute, request.id)
    // @fastify/otel set the URL as sent: a token in the path or the query would reach the trace store
    span.setAttribute(ATTR_URL_PATH, loggableUrl(request))
    const route = request.routeOptions.url
    if (route !== undefined) span.updateName(`${request.method} ${route}`)
  },
}

/**
 * Registers @fastify/otel's plugin when tracing is on (before any route or hook, so that it sees them all); the
 * request span is the root of a service's part of a trace, continuing the caller's context from the headers. With
 * tracing off, nothing is loaded or registered.
 */
export async function registerRequestTracing(app: FastifyInstance): Promise<void> {
  const tracing = activeTracing()
  if (tracing === undefined) return
  await app.register(tracing.requestTracing.plugin())
}
