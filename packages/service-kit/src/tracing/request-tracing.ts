// Request spans for every service: @fastify/otel registered on the app when tracing is on, named by route.
import type { FastifyInstance } from 'fastify'
import { activeTracing, isOperationsPath } from './active-tracing.ts'

/** The attribute that keeps a traced request's X-Request-Id (the id clients and logs know it by). */
export const requestIdAttribute = 'meridian.request_id'

/**
 * Registers @fastify/otel when tracing is on (before any route or hook, so that it sees them all): a span per
 * request named `<METHOD> <route>` under the http server span, with the request id as `meridian.request_id`. Probes
 * and scrapes (/health, /metrics) are left out. With tracing off, nothing is loaded or registered.
 */
export async function registerRequestTracing(app: FastifyInstance): Promise<void> {
  if (activeTracing() === undefined) return
  const { FastifyOtelInstrumentation } = await import('@fastify/otel')
  const instrumentation = new FastifyOtelInstrumentation({
    ignorePaths: (route) => isOperationsPath(route.url),
    // a span per hook would outnumber the spans of the work itself (the kit alone has a dozen hooks)
    instrumentHooks: false,
    // the request span covers the handler; a child for it alone would be named by the plugin chain
    instrumentHandler: false,
    requestHook(span, request) {
      span.setAttribute(requestIdAttribute, request.id)
      const route = request.routeOptions.url
      if (route !== undefined) span.updateName(`${request.method} ${route}`)
    },
  })
  await app.register(instrumentation.plugin())
}
