// The chassis as one Fastify plugin: request ids, errors, 404/405, rate limits, health, metrics, OpenAPI.
import rateLimit from '@fastify/rate-limit'
import { AppError, ErrorEnvelope, maintenanceHeader, rateLimitKeyPrefix } from '@meridian/contracts'
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { pino } from 'pino'
import { guardInternalRoutes } from './auth/service-credential.ts'
import { sendError, toAppError } from './error-handler.ts'
import { createHealthRegistry, type HealthRegistry, healthRoutes } from './health.ts'
import { rememberSecretRoute } from './logging.ts'
import { createServiceMetrics, metricsRoutes, type ServiceMetrics } from './metrics.ts'
import { registerOpenApi } from './openapi.ts'
import { syncedRedisStore } from './rate-limit-store.ts'
import type { Maintenance, RuntimeSettings } from './registry/runtime-settings.ts'
import { requestIdHeader } from './request-id.ts'
import { createRouteIndex, methods } from './routing.ts'

export interface ServiceKitOptions {
  name: string
  version: string
  /** only development shows stacks in 5xx bodies; test and production never do */
  environment: 'development' | 'test' | 'production'
  /**
   * Redis for rate limits shared by every instance; false disables rate limiting. `syncIntervalMs` (default 100):
   * how often an instance adds its local counts to Redis; 0 asks Redis on every request (exact, but a round trip
   * per request). See rate-limit-store.ts.
   */
  rateLimit:
    | {
        redis: Redis
        max: number
        timeWindowMs: number
        syncIntervalMs?: number
        /**
         * who a request is counted against; default the client address (request.ip). The gateway keys by user,
         * API key or its own view of the client address.
         */
        keyGenerator?: (request: FastifyRequest) => string | Promise<string>
      }
    | false
  description?: string
  /**
   * Turn errors of other layers into AppErrors before the error table applies, e.g. the database-error mapping
   * of @meridian/db. The first mapper that returns an AppError wins.
   */
  errorMappers?: ((error: unknown) => AppError | undefined)[]
  /**
   * SERVICE_CREDENTIAL as configured (comma-separated; every entry accepted): every route under /internal/ answers 401
   * without one of them in X-Service-Credential. A route there without it configured fails the start.
   */
  serviceCredential?: string
}

declare module 'fastify' {
  interface FastifyInstance {
    health: HealthRegistry
    metrics: ServiceMetrics
    service: { name: string; version: string }
    /** what Consul KV says at runtime (registry/runtime-settings.ts): maintenance and log level */
    runtime: RuntimeState
  }
}

export interface RuntimeState {
  /** set while the operator's maintenance switch is on */
  maintenance: Maintenance | undefined
  apply(settings: RuntimeSettings): void
}

/** What keeps answering in maintenance: an operator and the load balancer still need to see the instance. */
const operationsPaths: ReadonlySet<string> = new Set([
  '/health',
  '/healthz',
  '/health/live',
  '/health/ready',
  '/metrics',
])

const implementedMethods: ReadonlySet<string> = new Set(methods)

const notImplemented = (method: string) =>
  new AppError(501, 'NOT_IMPLEMENTED', { message: `Method ${method} is not implemented` })

/** How often an instance settles its local rate-limit counts with Redis (RATE_LIMIT_SYNC_MS). */
export const defaultRateLimitSyncMs = 100

async function serviceKit(app: FastifyInstance, options: ServiceKitOptions): Promise<void> {
  app.decorate('service', { name: options.name, version: options.version })
  app.decorate('health', createHealthRegistry())
  app.decorate('metrics', createServiceMetrics(options.name))

  app.addSchema(ErrorEnvelope)

  const startLevel = app.log.level
  const runtime: RuntimeState = {
    maintenance: undefined,
    apply(settings) {
      runtime.maintenance = settings.maintenance
      const level = settings.logLevel ?? startLevel
      if (level in pino.levels.values || level === 'silent') app.log.level = level
      else
        app.log.warn({ logLevel: level }, 'unknown log level in the runtime settings; the level is unchanged')
    },
  }
  app.decorate('runtime', runtime)

  app.addHook('onRequest', (request, reply, done) => {
    reply.header(requestIdHeader, request.id)
    // QUERY, PROPFIND, TRACE and the like parse, but no route of ours implements them (405 is for the methods we do)
    if (!implementedMethods.has(request.method)) return done(notImplemented(request.method))
    const { maintenance } = runtime
    if (maintenance !== undefined && !operationsPaths.has(request.url.split('?', 1)[0] ?? '')) {
      return done(
        new AppError(503, 'SERVICE_UNAVAILABLE', {
          message: maintenance.message,
          retryAfter: maintenance.retryAfterSeconds,
          headers: { [maintenanceHeader]: 'on' },
        }),
      )
    }
    done()
  })

  const routes = createRouteIndex()
  app.addHook('onRoute', (route) => routes.add(route))
  // a route's secret path segments are kept out of the outgoing calls' spans too (logging.ts)
  app.addHook('onRoute', (route) => {
    const secret = route.config?.secretPathParameters
    if (secret !== undefined) rememberSecretRoute(route.url, secret)
  })
  // before OpenAPI's hook, which documents the 401 of the security this adds
  app.addHook('onRoute', guardInternalRoutes(options.serviceCredential))

  const exposeStack = options.environment === 'development'
  app.setErrorHandler(async (error: FastifyError | AppError, request, reply) => {
    // Once headers are out no error can be answered. Like Express's default handler, log it and close the
    // connection, so the client sees a broken response rather than a truncated one that looks complete.
    if (reply.raw.headersSent) {
      request.log.error({ err: error }, 'error after the response headers were sent; closing the connection')
      reply.raw.destroy()
      return reply
    }
    try {
      const mapped = options.errorMappers?.reduce<AppError | undefined>(
        (found, map) => found ?? map(error),
        undefined,
      )
      const { appError, operational } = toAppError(mapped ?? error, request)
      const context = { statusCode: appError.statusCode, code: appError.code, errorName: error.name }
      if (operational) request.log.warn(context, appError.message)
      else request.log.error({ ...context, err: error }, 'unexpected error')
      return sendError(reply, request, appError, error, { exposeStack })
    } catch (failure) {
      // the error path itself must never throw: whatever it met, the client gets the generic 500 envelope
      request.log.error({ err: failure }, 'answering an error failed; answering the generic 500')
      const generic = new AppError(500, 'INTERNAL_ERROR')
      return sendError(reply, request, generic, generic, { exposeStack: false })
    }
  })

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? request.url
    const allowed = routes.allowedMethods(path)
    // a route of this very method that found nothing (a static file that is not there) is a 404, not a 405
    const error =
      allowed.length > 0 && !allowed.includes(request.method)
        ? new AppError(405, 'METHOD_NOT_ALLOWED', {
            message: `Method ${request.method} is not allowed for ${path}`,
            headers: { allow: allowed.join(', ') },
          })
        : AppError.notFound(`Route ${request.method} ${path} not found`)
    request.log.warn({ statusCode: error.statusCode, code: error.code }, error.message)
    return sendError(reply, request, error, error, { exposeStack: false })
  })

  if (options.rateLimit) {
    await app.register(rateLimit, {
      global: true,
      max: options.rateLimit.max,
      timeWindow: options.rateLimit.timeWindowMs,
      store: syncedRedisStore({
        redis: options.rateLimit.redis,
        // under the service's own keys (redisAccess: its Redis user may write nothing else)
        keyPrefix: rateLimitKeyPrefix(options.name),
        syncIntervalMs: options.rateLimit.syncIntervalMs ?? defaultRateLimitSyncMs,
        timeWindowMs: options.rateLimit.timeWindowMs,
      }),
      ...(options.rateLimit.keyGenerator ? { keyGenerator: options.rateLimit.keyGenerator } : {}),
      // Redis down must not take the API down with it
      skipOnError: true,
      addHeadersOnExceeding: {
        'x-ratelimit-limit': true,
        'x-ratelimit-remaining': true,
        'x-ratelimit-reset': true,
      },
      addHeaders: {
        'x-ratelimit-limit': true,
        'x-ratelimit-remaining': true,
        'x-ratelimit-reset': true,
        'retry-after': true,
      },
      errorResponseBuilder: (_request, context) =>
        AppError.rateLimited(Math.max(1, Math.ceil(context.ttl / 1000))),
    })
  }

  // /docs/json: security schemes, and the statuses the chassis answers added to every route (openapi.ts)
  await registerOpenApi(app, {
    name: options.name,
    version: options.version,
    ...(options.description === undefined ? {} : { description: options.description }),
    rateLimited: options.rateLimit !== false,
  })

  healthRoutes(app, app.health)
  metricsRoutes(app, app.metrics)
}

export const serviceKitPlugin = fp(serviceKit, { name: '@meridian/service-kit', fastify: '5.x' })
