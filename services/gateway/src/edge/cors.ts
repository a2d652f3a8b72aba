// CORS at the edge: exact origins from CORS_ORIGINS, credentials allowed, never a wildcard. The gateway is the only
// CORS authority: upstream Access-Control-* headers are dropped (forwarded-headers.ts).
//
// Written as two hooks rather than with @fastify/cors: that plugin registers an `OPTIONS *` route, which the
// chassis' 404/405 logic would then see as a route for every path (every unknown path would answer 405).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { rateLimitHeaderNames } from './rate-limit-key.ts'

export const corsMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

export interface CorsOptions {
  /** exact origins, e.g. https://shop.example.com */
  origins: string[]
  /** preflight cache lifetime, seconds */
  maxAgeSeconds?: number
}

/** Response headers a browser script may read. */
const exposedHeaders = ['x-request-id', 'retry-after', 'location', 'etag', ...rateLimitHeaderNames].join(', ')

function addVary(reply: FastifyReply, name: string): void {
  const current = reply.getHeader('vary')
  if (current === undefined) reply.header('vary', name)
  else if (
    !String(current)
      .toLowerCase()
      .split(',')
      .some((item) => item.trim() === name.toLowerCase())
  ) {
    reply.header('vary', `${String(current)}, ${name}`)
  }
}

/** Adds the CORS response headers a request's answer needs (those of a non-preflight request). */
export type CorsResponseHeaders = (request: FastifyRequest, reply: FastifyReply) => void

/**
 * Registers the preflight answer and the response headers of the gateway's own answers; returns the function that
 * adds those headers, for the answers relayed from services, which bypass Fastify's onSend hooks.
 */
export function registerCors(app: FastifyInstance, options: CorsOptions): CorsResponseHeaders {
  const allowed = new Set(options.origins)
  if (allowed.has('*')) throw new Error('CORS: a wildcard origin with credentials is forbidden')
  const maxAge = String(options.maxAgeSeconds ?? 600)
  const isPreflight = (request: FastifyRequest) =>
    request.method === 'OPTIONS' &&
    request.headers.origin !== undefined &&
    request.headers['access-control-request-method'] !== undefined

  // Preflights are the gateway's to answer: they never reach a service. A refused origin gets 204 with no allow
  // headers, which the browser reads as "no".
  app.addHook('onRequest', (request, reply, done) => {
    if (!isPreflight(request)) return done()
    const origin = String(request.headers.origin)
    addVary(reply, 'Origin')
    addVary(reply, 'Access-Control-Request-Headers')
    if (allowed.has(origin)) {
      reply.header('access-control-allow-origin', origin)
      reply.header('access-control-allow-credentials', 'true')
      reply.header('access-control-allow-methods', corsMethods.join(', '))
      const requested = request.headers['access-control-request-headers']
      if (requested) reply.header('access-control-allow-headers', String(requested))
      reply.header('access-control-max-age', maxAge)
    }
    reply.code(204).header('content-length', '0').send()
  })

  // On every answer (proxied, the gateway's own, and errors such as 429 sent before routing) so that a browser can
  // read it, the request id included.
  const addResponseHeaders: CorsResponseHeaders = (request, reply) => {
    const origin = request.headers.origin
    if (origin === undefined || isPreflight(request)) return
    addVary(reply, 'Origin')
    if (allowed.has(origin)) {
      reply.header('access-control-allow-origin', origin)
      reply.header('access-control-allow-credentials', 'true')
      reply.header('access-control-expose-headers', exposedHeaders)
    }
  }
  app.addHook('onSend', (request, reply, payload, done) => {
    addResponseHeaders(request, reply)
    done(null, payload)
  })
  return addResponseHeaders
}
